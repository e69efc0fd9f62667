import type { Config } from '../config.js';
import { migrations } from '../migrations.js';
import { createDatabase, type Database } from '../platform/db/database.js';
import { migrateToLatest } from '../platform/db/migrator.js';

/** Opens the configured database, migrated, for one command, and closes it afterwards. */
export async function withDatabase<T>(config: Config, work: (db: Database) => Promise<T>): Promise<T> {
  const db = createDatabase(config.database);
  try {
    await migrateToLatest(db, migrations);
    return await work(db);
  } finally {
    await db.destroy();
  }
}
