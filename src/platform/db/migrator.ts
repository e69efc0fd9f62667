import { type Migration, type MigrationResult, Migrator, SqliteAdapter, sql } from 'kysely';
import type { Database } from './database.js';
import { migrations as allMigrations } from './migrations/index.js';

type Migrations = Readonly<Record<string, Migration>>;

const isSqlite = (db: Database) => db.getExecutor().adapter instanceof SqliteAdapter;

/**
 * Kysely looks for its bookkeeping tables in every schema it can see; on PostgreSQL we name ours (the
 * connection's current schema), so that deployments in different schemas of one database stay apart.
 */
async function migratorFor(db: Database, migrations: Migrations): Promise<Migrator> {
  const schema = isSqlite(db)
    ? undefined
    : (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema;
  return new Migrator({
    db,
    provider: { getMigrations: async () => ({ ...migrations }) },
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
}

/**
 * Brings the schema up to date, safely when several instances start at once. On PostgreSQL, Kysely holds
 * a session advisory lock while it migrates (in a transaction), so the others wait and then find nothing
 * left to do. On SQLite Kysely does neither, so the whole run is one IMMEDIATE transaction: other
 * processes wait for its write lock, and a migration that fails leaves nothing half-applied.
 */
export async function migrateToLatest(
  db: Database,
  migrations: Migrations = allMigrations,
): Promise<MigrationResult[]> {
  const migrate = async () => {
    const { error, results } = await (await migratorFor(db, migrations)).migrateToLatest();
    if (error) throw error;
    return results ?? [];
  };
  if (!isSqlite(db)) return migrate();
  await sql`begin immediate`.execute(db);
  try {
    const results = await migrate();
    await sql`commit`.execute(db);
    return results;
  } catch (error) {
    await sql`rollback`.execute(db);
    throw error;
  }
}

/** Names of the migrations the code knows that the database has not applied. */
export async function pendingMigrations(
  db: Database,
  migrations: Migrations = allMigrations,
): Promise<string[]> {
  const known = await (await migratorFor(db, migrations)).getMigrations();
  return known.filter((migration) => migration.executedAt === undefined).map((migration) => migration.name);
}
