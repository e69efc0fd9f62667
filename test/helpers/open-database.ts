import { loadConfig } from '../../src/config.js';
import { createDatabase } from '../../src/platform/db/database.js';
import { type Closer, deferClose } from './build-test-app.js';
import type { Dialect } from './environment.js';
import { createTestDatabase } from './test-database.js';

/**
 * A fresh database of the dialect at the latest migration, open, with the configuration read for it (the
 * defaults, on that database): for a service tested alone, without the app. Closed, then dropped, when `t`
 * ends (after whatever `t` deferred later).
 */
export async function openTestDatabase(t: Closer, dialect: Dialect) {
  const database = await createTestDatabase(dialect, { migrated: true });
  deferClose(t, () => database.drop());
  const config = loadConfig({ DATABASE_URL: database.url });
  const db = createDatabase(config.database);
  deferClose(t, () => db.destroy());
  return { db, config };
}
