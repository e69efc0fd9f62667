import {
  type DatabaseIntrospector,
  type Migration,
  type MigrationResult,
  Migrator,
  SqliteAdapter,
  sql,
} from 'kysely';
import { createDatabase, type Database, type DatabaseSettings } from './database.js';

/** Migrations by name; names sort in the order they run (`0001-...`). */
export type Migrations = Readonly<Record<string, Migration>>;

const isSqlite = (db: Database) => db.getExecutor().adapter instanceof SqliteAdapter;

/**
 * On PostgreSQL, Kysely's migrator looks for its bookkeeping tables by listing the tables of every schema
 * in the database. That mixes up deployments in different schemas of one database, and fails outright when
 * another deployment drops a schema during the listing. So the migrator gets the same database seen
 * through an introspector of the connection's own schema, and is told that schema by name.
 */
async function migratorFor(db: Database, migrations: Migrations): Promise<Migrator> {
  const provider = { getMigrations: async () => ({ ...migrations }) };
  if (isSqlite(db)) return new Migrator({ db, provider });
  const schema = (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]
    ?.schema;
  if (!schema) throw new Error('the database connection has no current schema (check search_path)');
  return new Migrator({ db: withOwnSchemaIntrospection(db, schema), provider, migrationTableSchema: schema });
}

function withOwnSchemaIntrospection(db: Database, schema: string): Database {
  const introspector: DatabaseIntrospector = {
    getSchemas: async () => [{ name: schema }],
    getTables: async () => {
      const { rows } = await sql<{ name: string; isView: boolean }>`
        select table_name as name, table_type = 'VIEW' as "isView"
        from information_schema.tables where table_schema = ${schema}`.execute(db);
      return rows.map((row) => ({ name: row.name, schema, isView: row.isView, columns: [] }));
    },
    getMetadata: async () => ({ tables: await introspector.getTables() }),
  };
  // Everything else is the database itself (methods bound to it: Kysely keeps private state).
  return new Proxy(db, {
    get(target, property) {
      if (property === 'introspection') return introspector;
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * Brings the schema up to date, safely when several instances start at once. On PostgreSQL, Kysely holds
 * a session advisory lock while it migrates (in a transaction), so the others wait and then find nothing
 * left to do. On SQLite Kysely does neither, so the whole run is one IMMEDIATE transaction: other
 * processes wait for its write lock, and a migration that fails leaves nothing half-applied.
 */
export async function migrateToLatest(db: Database, migrations: Migrations): Promise<MigrationResult[]> {
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
export async function pendingMigrations(db: Database, migrations: Migrations): Promise<string[]> {
  const known = await (await migratorFor(db, migrations)).getMigrations();
  return known.filter((migration) => migration.executedAt === undefined).map((migration) => migration.name);
}

/**
 * `migrateToLatest` for the service's own database, whose statements are bounded
 * (`DATABASE_QUERY_TIMEOUT_MS`) while migrations take what they take: on PostgreSQL through a connection of
 * their own without the bound; on SQLite through `db` itself (a second connection to `:memory:` would be
 * another database, and SQLite has no bound).
 */
export async function migrateWithoutBound(
  db: Database,
  settings: DatabaseSettings,
  migrations: Migrations,
): Promise<MigrationResult[]> {
  if (settings.dialect !== 'postgres') return migrateToLatest(db, migrations);
  const unbounded = createDatabase({ ...settings, queryTimeoutMs: undefined, poolSize: 1 });
  try {
    return await migrateToLatest(unbounded, migrations);
  } finally {
    await unbounded.destroy();
  }
}
