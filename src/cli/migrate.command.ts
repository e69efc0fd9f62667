import { migrations } from '../migrations.js';
import { createDatabase } from '../platform/db/database.js';
import { migrateWithoutBound } from '../platform/db/migrator.js';
import type { Command } from './cli-context.js';
import { UsageError } from './usage.js';

/** `migrate`: applies the pending migrations and prints `{"applied": [names]}`. */
export const migrateCommand: Command = async (args, { config, io }) => {
  if (args.length > 0) throw new UsageError(`migrate takes no arguments (got ${args.join(' ')})`);
  const settings = config().database;
  const db = createDatabase(settings);
  try {
    const applied = await migrateWithoutBound(db, settings, migrations);
    io.stdout(`${JSON.stringify({ applied: applied.map((result) => result.migrationName) })}\n`);
  } finally {
    await db.destroy();
  }
  return 0;
};
