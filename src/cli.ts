import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { type Config, ConfigError, loadConfig } from './config.js';
import { createTokens } from './modules/tokens/tokens.module.js';
import { GRANTS, type Grant, isGrant } from './platform/auth.js';
import { createDatabase, type Database } from './platform/db/database.js';
import { migrateToLatest } from './platform/db/migrator.js';
import { parseSnowflake } from './platform/snowflake.js';

const USAGE = `Usage: node dist/cli.js <command> [options]

Commands:
  migrate
      Apply every pending database migration (DATABASE_URL) and exit.
  token issue --owner <id> --grant <grant> [--grant <grant> ...] [--ttl <seconds>]
      Issue a token for an owner (a Discord ID) with the given grants; prints {"token", "expires_at"}.
      Grants: ${GRANTS.join(', ')}
  token revoke --jti <jti>
      Revoke a token and every token refreshed from it, or that it was refreshed from.

Configuration comes from the environment (and .env), as for the service.
`;

class UsageError extends Error {}

/** Opens the configured database, migrated, for one command. */
async function withDatabase<T>(config: Config, work: (db: Database) => Promise<T>): Promise<T> {
  const db = createDatabase(config.database);
  try {
    await migrateToLatest(db);
    return await work(db);
  } finally {
    await db.destroy();
  }
}

async function migrate(config: Config): Promise<void> {
  const db = createDatabase(config.database);
  try {
    const applied = await migrateToLatest(db);
    console.log(JSON.stringify({ applied: applied.map((result) => result.migrationName) }));
  } finally {
    await db.destroy();
  }
}

async function token(config: Config, args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      owner: { type: 'string' },
      grant: { type: 'string', multiple: true },
      ttl: { type: 'string' },
      jti: { type: 'string' },
    },
  });
  const action = positionals[0];
  if (action === 'issue') {
    const owner = parseSnowflake(values.owner);
    if (owner === undefined)
      throw new UsageError('--owner must be a Discord ID: an integer from 0 to 2^64-1');
    const grants = [...new Set(values.grant ?? [])];
    if (grants.length === 0) throw new UsageError('give at least one --grant');
    const unknown = grants.filter((grant) => !isGrant(grant));
    if (unknown.length > 0) throw new UsageError(`unknown grant(s): ${unknown.join(', ')}`);
    const ttl = values.ttl === undefined ? config.auth.tokenTtlSeconds : Number(values.ttl);
    if (!Number.isInteger(ttl) || ttl < 60 || ttl > 365 * 86_400)
      throw new UsageError('--ttl must be whole seconds from 60 to 31536000');
    const issued = await withDatabase(config, async (db) =>
      (await createTokens(db, config)).issue(owner, grants as Grant[], ttl),
    );
    process.stderr.write(`issued token ${issued.jti} for owner ${owner} with ${grants.join(' ')}\n`);
    console.log(JSON.stringify({ token: issued.token, expires_at: issued.expiresAt.toISOString() }));
    return;
  }
  if (action === 'revoke') {
    if (!values.jti) throw new UsageError('give the --jti of the token to revoke');
    const jti = values.jti;
    const revoked = await withDatabase(config, async (db) => (await createTokens(db, config)).revoke(jti));
    console.log(JSON.stringify({ revoked }));
    if (revoked === 0) process.exitCode = 1;
    return;
  }
  throw new UsageError(`unknown token action: ${action ?? '(none)'}`);
}

const commands: Record<string, (config: Config, args: string[]) => Promise<void>> = { migrate, token };

async function main(argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  const command = name ? commands[name] : undefined;
  if (!command) throw new UsageError(name ? `unknown command: ${name}` : 'no command given');
  await command(loadConfig(process.env), rest);
}

if (existsSync('.env')) process.loadEnvFile('.env');
try {
  await main(process.argv.slice(2));
} catch (error) {
  if (
    error instanceof UsageError ||
    (error as NodeJS.ErrnoException).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION'
  ) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}`);
    process.exitCode = 2;
  } else {
    process.stderr.write(`${error instanceof ConfigError ? error.message : (error as Error).message}\n`);
    process.exitCode = 1;
  }
}
