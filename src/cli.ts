import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './config.js';
import { createDatabase } from './platform/db/database.js';
import { migrateToLatest } from './platform/db/migrator.js';

const USAGE = `Usage: node dist/cli.js <command>

Commands:
  migrate     apply every pending database migration (DATABASE_URL) and exit
`;

async function migrate(): Promise<void> {
  const db = createDatabase(loadConfig(process.env).database);
  try {
    const applied = await migrateToLatest(db);
    const names = applied.map((result) => result.migrationName);
    console.log(JSON.stringify({ applied: names }));
  } finally {
    await db.destroy();
  }
}

const commands: Record<string, (args: string[]) => Promise<void>> = { migrate };

async function main(argv: string[]): Promise<number> {
  const { positionals } = parseArgs({ args: argv, allowPositionals: true, strict: false });
  const [name, ...rest] = positionals;
  const command = name ? commands[name] : undefined;
  if (!command) {
    process.stderr.write(name ? `Unknown command: ${name}\n\n${USAGE}` : USAGE);
    return 2;
  }
  await command(rest);
  return 0;
}

if (existsSync('.env')) process.loadEnvFile('.env');
try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  console.error(error instanceof ConfigError ? error.message : (error as Error).message);
  process.exitCode = 1;
}
