// One "instance" for the concurrent-migration test: migrates DATABASE_URL with the sample migrations and
// prints which of them it ran itself.
import { loadConfig } from '../../src/config.js';
import { createDatabase } from '../../src/platform/db/database.js';
import { migrateToLatest } from '../../src/platform/db/migrator.js';
import { sampleMigrations } from './sample-migrations.js';

const db = createDatabase(loadConfig(process.env).database);
const runs: string[] = [];
try {
  await migrateToLatest(db, sampleMigrations(runs, 1000));
  process.stdout.write(JSON.stringify({ runs }));
} finally {
  await db.destroy();
}
