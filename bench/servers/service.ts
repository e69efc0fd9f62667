// The service under load: the real app (SQLite in a temp dir, or with BENCH_DATABASE=postgres a schema of
// its own on BENCH_POSTGRES_URL, dropped at exit), logging at info to /dev/null (batched as to stdout in
// production), on a random port it prints on stdout with a token carrying every grant.
// It also answers `POST /noop/messenger/logging/interaction` and `POST /noop/ping/{player}`: the real routes
// (parsing, validation, token check, answer) over services that store nothing, the baselines of the
// interaction-log and ping-ingestion scenarios. With BENCH_PING_SEED_DAYS, it first records that many days
// of pings for BENCH_PING_PLAYER (BENCH_PING_SEED_PER_DAY samples a day, through the real ingestion route).
// With BENCH_CACHE_SEED_PLAYERS, it first looks that many distinct players up through the real route (an
// upstream that answers any UUID, and a budget that allows it, are the runner's to give), filling the cache.
// With BENCH_TOKEN_OWNERS, it issues that many tokens, each of an owner of its own (`tokens`).
// Its line on stdout also says how it is set up where the report needs it: the in-process cache's bound,
// the owner's share of the upstream key, how long the seeding took, and (after seeding players) the memory
// held once the seeding's garbage is collected.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { migrations } from '../../src/migrations.js';
import { interactionsRoutes } from '../../src/modules/interactions/interactions.routes.js';
import type { InteractionsService } from '../../src/modules/interactions/interactions.service.js';
import { createOwnerBudgetsService } from '../../src/modules/owner-budgets/owner-budgets.service.js';
import { createPingHistoryReplies } from '../../src/modules/ping/ping.reply.js';
import { pingRoutes } from '../../src/modules/ping/ping.routes.js';
import type { PingService } from '../../src/modules/ping/ping.service.js';
import { createTokensService } from '../../src/modules/tokens/tokens.service.js';
import { GRANTS } from '../../src/platform/auth/grants.js';
import { resolveJwtSecret } from '../../src/platform/auth/jwt-secret.js';
import { createTokenCodec } from '../../src/platform/auth/token-codec.js';
import { migrateToLatest } from '../../src/platform/db/migrator.js';
import { executorOf } from '../../src/platform/db/transactions.js';
import { logDestination } from '../../src/platform/logger.js';
import { benchPlayerUuid, SEED_PREFIX } from './bench-players.js';

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
  // The bench measures speed: no owner's budget of work stands in its way, unless a scenario sets one.
  WORK_BUDGET_UNITS: '1000000000',
  WORK_BUDGET_MAX_IN_FLIGHT: '100000',
  ...process.env,
  DATABASE_URL: databaseUrl,
  DATA_DIR: dir,
  PORT: '0',
  LOG_LEVEL: 'info',
  // A key space of this run's own in a shared Redis.
  REDIS_KEY_PREFIX: `bench:${randomBytes(4).toString('hex')}:`,
});
// Log lines are written as production writes them to stdout (logDestination), here to /dev/null.
const app = await buildApp({ config, logStream: logDestination('/dev/null') });
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
  list: async () => ({ logs: [], bytes: 0 }),
  deleteExpired: async () => 0,
  close: async () => undefined,
};
await app.register(interactionsRoutes(storesNothing), { prefix: '/noop' });

const pingStoresNothing: PingService = {
  ingest: async (player, samples) => ({
    uuid: player.replaceAll('-', '').toLowerCase(),
    stored: samples.length,
    duplicates: 0,
  }),
  history: async (player) => ({ uuid: player, revision: 0, days: [] }),
  deleteExpired: async () => 0,
  close: async () => undefined,
};
await app.register(pingRoutes(pingStoresNothing, createPingHistoryReplies(0), config.ping.bodyLimitBytes), {
  prefix: '/noop',
});

const tokens = createTokensService({
  db: executorOf(app.db),
  codec: createTokenCodec(await resolveJwtSecret(config.auth.jwtSecret, config.dataDir), config.auth),
  settings: config.auth,
});
const owners = Number(process.env.BENCH_TOKEN_OWNERS ?? 1);
// BENCH_RAISED_OWNERS (`1,3`): owners an operator gave a budget no load reaches, as `budget set` does.
const budgets = createOwnerBudgetsService({
  db: executorOf(app.db),
  settings: config.workBudget,
  log: app.log,
});
for (const raised of (process.env.BENCH_RAISED_OWNERS ?? '').split(',').filter(Boolean))
  await budgets.set(BigInt(raised), 1_000_000_000, { actor: 'operator', reason: 'bench' });
const issued: string[] = [];
for (let owner = 1n; owner <= BigInt(owners); owner++)
  issued.push((await tokens.issue(owner, [...GRANTS], { ttlSeconds: 86_400 })).token);
const token = issued[0];
const seedStarted = performance.now();
await seedPings();
const heldAfterSeeding = await seedPlayers();
const seedMs = performance.now() - seedStarted;
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
process.stdout.write(
  `${JSON.stringify({
    port: typeof address === 'object' && address ? address.port : 0,
    token,
    tokens: issued,
    cacheMaxBytes: config.cache.memoryMaxBytes,
    ownerSharePercent: config.upstream.ownerSharePercent,
    seedMs,
    heldAfterSeeding,
  })}\n`,
);
process.on('SIGTERM', async () => {
  await app.close();
  if (onPostgres) await admin(`drop schema ${schema} cascade`);
  // The database may be in memory (a tmpfs): it must not outlive the run.
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
});

/** Days of pings for one player, sent through the real route a thousand samples at a time, oldest first. */
async function seedPings(): Promise<void> {
  const days = Number(process.env.BENCH_PING_SEED_DAYS ?? 0);
  const perDay = Number(process.env.BENCH_PING_SEED_PER_DAY ?? 1440);
  const player = process.env.BENCH_PING_PLAYER ?? '20934ef9488c465180a78f861586b4cf';
  const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
  const spacing = Math.floor(86_400_000 / perDay);
  let samples: { ping: number; lobby: string; at: string }[] = [];
  const send = async () => {
    const reply = await app.inject({
      method: 'POST',
      url: `/ping/${player}`,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ samples }),
    });
    if (reply.statusCode !== 200) throw new Error(`seeding pings: ${reply.statusCode} ${reply.body}`);
    samples = [];
  };
  for (let day = days; day >= 1; day--) {
    for (let index = 0; index < perDay; index++) {
      const at = today - day * 86_400_000 + index * spacing;
      samples.push({
        ping: 20 + ((day * 31 + index * 7) % 180),
        lobby: `lobby_${index % 12}`,
        at: new Date(at).toISOString(),
      });
      if (samples.length === 1000) await send();
    }
  }
  if (samples.length > 0) await send();
}

/**
 * Distinct players looked up through the real route, `BENCH_CACHE_SEED_PLAYERS` of them, a few at a time
 * (as many as the upstream connections, so that the upstream calls overlap without queueing): each is a
 * miss that fetches, records and caches the player, as a client's first lookup would.
 */
async function seedPlayers(): Promise<NodeJS.MemoryUsage | undefined> {
  // Set to 0, it seeds nothing but still says what an empty cache's process holds: the reference.
  if (process.env.BENCH_CACHE_SEED_PLAYERS === undefined) return undefined;
  const count = Number(process.env.BENCH_CACHE_SEED_PLAYERS);
  let next = 0;
  const lookUpInTurn = async () => {
    while (next < count) {
      const uuid = benchPlayerUuid(SEED_PREFIX, next++);
      const reply = await app.inject({
        method: 'GET',
        url: `/player/${uuid}`,
        headers: { authorization: `Bearer ${token}` },
      });
      if (reply.statusCode !== 200) throw new Error(`seeding players: ${reply.statusCode} ${reply.body}`);
    }
  };
  await Promise.all(Array.from({ length: config.upstream.connections }, lookUpInTurn));
  return await heldNow();
}

/**
 * The memory the process holds once garbage is collected: after a fill, the heap is full of the parsed
 * answers and request objects of the lookups, which V8 collects when it likes. A bench-only collection
 * (`gc` exposed for it), a few times with pauses between: the Buffers a collection frees are released
 * after it, so the count right after one still holds them.
 */
async function heldNow(): Promise<NodeJS.MemoryUsage> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  for (let round = 0; round < 3; round++) {
    gc();
    await sleep(50);
  }
  return process.memoryUsage();
}
