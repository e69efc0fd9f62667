import { type Migration, type MigrationResult, Migrator } from 'kysely';
import type { Database } from './database.js';
import { migrations as allMigrations } from './migrations/index.js';

function migratorFor(db: Database, migrations: Readonly<Record<string, Migration>>): Migrator {
  return new Migrator({ db, provider: { getMigrations: async () => ({ ...migrations }) } });
}

/**
 * Brings the schema up to date. Safe when several instances start at once: on PostgreSQL Kysely holds a
 * session advisory lock while it migrates, so the others wait and then find nothing left to do.
 */
export async function migrateToLatest(
  db: Database,
  migrations: Readonly<Record<string, Migration>> = allMigrations,
): Promise<MigrationResult[]> {
  const { error, results } = await migratorFor(db, migrations).migrateToLatest();
  if (error) throw error;
  return results ?? [];
}

/** Names of the migrations the code knows that the database has not applied. */
export async function pendingMigrations(
  db: Database,
  migrations: Readonly<Record<string, Migration>> = allMigrations,
): Promise<string[]> {
  const known = await migratorFor(db, migrations).getMigrations();
  return known.filter((migration) => migration.executedAt === undefined).map((migration) => migration.name);
}
