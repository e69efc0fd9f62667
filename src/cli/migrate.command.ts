import { migrations } from '../migrations.js';
import { createDatabase, withoutQueryBound } from '../platform/db/database.js';
import { migrateToLatest } from '../platform/db/migrator.js';
import type { Command } from './cli-context.js';
import { UsageError } from './usage.js';

/** `migrate`: applies the pending migrations and prints `{"applied": [names]}`. */
export const migrateCommand: Command = async (args, { config, io }) => {
  if (args.length > 0) throw new UsageError(`migrate takes no arguments (got ${args.join(' ')})`);
  // Migrations take what they take: no bound on a statement.
  const db = createDatabase(withoutQueryBound(config().database));
  try {
    const applied = await migrateToLatest(db, migrations);
    io.stdout(`${JSON.stringify({ applied: applied.map((result) => result.migrationName) })}\n`);
  } finally {
    await db.destroy();
  }
  return 0;
};
