// The service under load: the real app (SQLite in a temp dir, or with BENCH_DATABASE=postgres a schema of
// its own on BENCH_POSTGRES_URL, dropped at exit), logging at info to /dev/null as a production instance
// would log to a collector, on a random port it prints on stdout with a token carrying every grant.
// It also answers `POST /noop/messenger/logging/interaction`: the real route (parsing, validation, token
// check, answer) over a service that stores nothing, the baseline of the interaction-log scenarios.
import { randomBytes, randomUUID } from 'node:crypto';
import { createWriteStream, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { migrations } from '../../src/migrations.js';
import { interactionsRoutes } from '../../src/modules/interactions/interactions.routes.js';
import type { InteractionsService } from '../../src/modules/interactions/interactions.service.js';
import { createTokensModule } from '../../src/modules/tokens/tokens.module.js';
import { GRANTS } from '../../src/platform/auth/grants.js';
import { resolveJwtSecret } from '../../src/platform/auth/jwt-secret.js';
import { migrateToLatest } from '../../src/platform/db/migrator.js';
import { executorOf } from '../../src/platform/db/transactions.js';

const dir = mkdtempSync(join(tmpdir(), 'pds-bench-'));
const postgresUrl = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `bench_${randomBytes(6).toString('hex')}`;
const onPostgres = process.env.BENCH_DATABASE === 'postgres';

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

let databaseUrl = `sqlite:${join(dir, 'bench.sqlite')}`;
if (onPostgres) {
  await admin(`create schema ${schema}`);
  const url = new URL(postgresUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  databaseUrl = url.toString();
}

const config = loadConfig({
  ...process.env,
  DATABASE_URL: databaseUrl,
  DATA_DIR: dir,
  PORT: '0',
  LOG_LEVEL: 'info',
});
const app = await buildApp({ config, logStream: createWriteStream('/dev/null') });
await migrateToLatest(app.db, migrations);

const storesNothing: InteractionsService = {
  log: async (owner, log) => {
    const { interaction_token: _token, ...interaction } = log.interaction;
    return {
      id: randomUUID(),
      receivedAt: Date.now(),
      owner,
      document: { ...log, interaction },
      duplicate: false,
    };
  },
  knownUsername: async () => undefined,
  list: async () => ({ logs: [] }),
  deleteExpired: async () => 0,
  close: async () => undefined,
};
await app.register(interactionsRoutes(storesNothing), { prefix: '/noop' });

const tokens = createTokensModule({
  db: executorOf(app.db),
  settings: config.auth,
  secret: await resolveJwtSecret(config.auth.jwtSecret, config.dataDir),
});
const { token } = await tokens.service.issue(1n, [...GRANTS], { ttlSeconds: 86_400 });
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
process.stdout.write(
  `${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0, token })}\n`,
);
process.on('SIGTERM', async () => {
  await app.close();
  if (onPostgres) await admin(`drop schema ${schema} cascade`);
  process.exit(0);
});
