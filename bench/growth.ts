// How cost grows with work: the points of the growth tables of docs/performance.md, each part selected by
// BENCH_ONLY as the scenarios are (`BENCH_ONLY=growth` runs them all and nothing else). Each point is
// measured once, for BENCH_GROWTH_SECONDS (5): there are many, and they are compared with each other.
import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { shareOf } from '../src/upstream/owner-quota.js';
import { type FakeUpstream, startFakeUpstream, type UpstreamCall } from '../test/helpers/fake-upstream.js';
import { type Outcome, runScenario, upstreamEnv } from './compare.js';
import {
  bearer,
  type Loaded,
  load,
  peakRssMiB,
  type Started,
  sampleOf,
  settings,
  start,
  stop,
} from './harness.js';
import { interactionLogs, pingHistory, playerHit, profilesHit, type Scenario } from './scenarios.js';
import { SEED_PREFIX } from './servers/bench-players.js';
import { wrkOutput } from './wrk.js';

const seconds = settings.growthDuration;
const MiB = 1024 ** 2;

/** A list of numbers from the environment (`1000,10000`; empty: none), or the default. */
function numbers(name: string, fallback: readonly number[]): readonly number[] {
  const given = process.env[name];
  if (given === undefined) return fallback;
  return given
    .split(',')
    .filter((item) => item.trim() !== '')
    .map(Number);
}

const fixtureFile = (name: string) => `test/fixtures/hypixel/${name}`;

/**
 * The typical player cut down to the fields a profile card reads (about 400 bytes): small enough that the
 * bodies of 100k of them fit the cache's default bound, so that a spread over all of them measures hits.
 */
function smallPlayer(): Buffer {
  const { player } = JSON.parse(readFileSync(fixtureFile('player.json'), 'utf8')) as {
    player: Record<string, unknown>;
  };
  const fields = ['_id', 'uuid', 'firstLogin', 'playername', 'displayname', 'networkExp', 'karma'];
  const kept = [...fields, 'achievementPoints', 'newPackageRank', 'userLanguage', 'socialMedia', 'rank'];
  const cut = Object.fromEntries(kept.filter((name) => name in player).map((name) => [name, player[name]]));
  return Buffer.from(JSON.stringify({ success: true, player: cut }));
}

/**
 * The typical player cut to about 8 KB (its fields in order, as many as fit): 20,000 of them are more than
 * the default bound holds, so that the point shows what the process holds with the cache full.
 */
function cardPlayer(): Buffer {
  const { player } = JSON.parse(readFileSync(fixtureFile('player.json'), 'utf8')) as {
    player: Record<string, unknown>;
  };
  const cut: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(player)) {
    cut[name] = value;
    if (JSON.stringify(cut).length > 8000) delete cut[name];
  }
  return Buffer.from(JSON.stringify({ success: true, player: cut }));
}

/** A fake upstream answering any UUID with a copy of `player`, with a key limit no fill reaches. */
const plentifulUpstream = (player: Buffer) =>
  startFakeUpstream({ rateLimit: 1_000_000_000, rateLimitWindowSeconds: 3600, anyPlayer: player });

async function withService<T>(env: Record<string, string>, use: (service: Started) => Promise<T>) {
  const service = await start('service', env);
  try {
    return await use(service);
  } finally {
    await stop(service);
  }
}

// --- The cache: 1k -> 100k players -------------------------------------------------------------------

/** A process's memory once garbage is collected, MiB: resident, Buffers (the cached bodies), heap. */
export interface Held {
  readonly rssMiB: number;
  readonly buffersMiB: number;
  readonly heapMiB: number;
}

const heldOf = (usage: NodeJS.MemoryUsage | undefined): Held | undefined =>
  usage && { rssMiB: usage.rss / MiB, buffersMiB: usage.arrayBuffers / MiB, heapMiB: usage.heapUsed / MiB };

export interface CachePoint {
  readonly players: number;
  /** Which player the upstream answers every UUID with. */
  readonly player: 'small' | 'card' | 'typical';
  /** One cached body (the service's PlayerResult), bytes. */
  readonly bodyBytes: number;
  /** The in-process cache's bound, bytes. */
  readonly boundBytes: number;
  readonly fillSeconds: number;
  /** After the fill and a garbage collection. */
  readonly held?: Held;
  /** Over the fill and the load. */
  readonly peakRssMiB?: number;
  /** The share of the lookups under load (warm-up included) answered from the cache (its /metrics counters). */
  readonly hitShare: number;
  readonly measured: Loaded;
}

export interface CacheGrowth {
  /** The memory of the service with nothing cached: what the points' memory is compared with. */
  readonly empty?: Held;
  readonly points: readonly CachePoint[];
}

/** The player cache's lookups so far by result, from the service's Prometheus counters. */
async function playerLookups(service: Started): Promise<Record<string, number>> {
  const text = (await sampleOf(`${service.url}/metrics`, {})).body.toString('utf8');
  const counts: Record<string, number> = {};
  for (const [, result, value] of text.matchAll(
    /^cache_lookups_total\{resource="player",result="(\w+)"\} (\d+)/gm,
  ))
    if (result) counts[result] = Number(value);
  return counts;
}

/**
 * The service with `players` distinct players looked up once each (through the real route: a miss, a fetch,
 * a record), then hit at random among all of them: the memory the filled cache holds, and whether a hit
 * costs more when there are more entries.
 */
async function cachePoint(
  upstream: FakeUpstream,
  players: number,
  player: CachePoint['player'],
  boundEnv: Record<string, string> = {},
) {
  const env = {
    ...upstreamEnv(upstream),
    ...boundEnv,
    // All the fill's lookups are one owner's: let it spend all of the (plentiful) key.
    UPSTREAM_OWNER_SHARE_PERCENT: '100',
    CACHE_PLAYER_FRESH_SECONDS: '86400',
    BENCH_CACHE_SEED_PLAYERS: String(players),
    // Each fetch is recorded in its own SQLite transaction, fsynced (synchronous = FULL): on this machine's
    // disk that alone makes 100k lookups take minutes. The fill is the setup, not what is measured (hits
    // write nothing), so the database goes where an fsync costs nothing.
    TMPDIR: memoryBackedDir(),
  };
  return withService(env, async (service): Promise<CachePoint> => {
    const headers = bearer(service.info.token);
    const before = await playerLookups(service);
    const script = { script: 'bench/random-players.lua', scriptArgs: [SEED_PREFIX, String(players)] };
    const measured = await load(`${service.url}/`, { headers, ...script, seconds }, service);
    const after = await playerLookups(service);
    const delta = (result: string) => (after[result] ?? 0) - (before[result] ?? 0);
    const lookups = delta('hit') + delta('miss') + delta('stale');
    const sample = await sampleOf(`${service.url}/player/${FIRST_SEEDED}`, headers);
    return {
      players,
      player,
      bodyBytes: sample.body.length,
      boundBytes: service.info.cacheMaxBytes ?? Number.NaN,
      fillSeconds: (service.info.seedMs ?? Number.NaN) / 1000,
      held: heldOf(service.info.heldAfterSeeding),
      peakRssMiB: peakRssMiB(service),
      hitShare: lookups > 0 ? delta('hit') / lookups : Number.NaN,
      measured,
    };
  });
}

/** /dev/shm (tmpfs) where there is one to write to, else the usual temporary directory. */
function memoryBackedDir(): string {
  try {
    accessSync('/dev/shm', constants.W_OK);
    return '/dev/shm';
  } catch {
    return tmpdir();
  }
}

const FIRST_SEEDED = `${SEED_PREFIX}${'0'.repeat(32 - SEED_PREFIX.length)}`;

/**
 * Typical players (46 KB) past a bound lowered for the point: several times more bodies than it allows,
 * so that the point shows the bound holding the memory down, and what the misses then cost. (Past the
 * default bound it would take tens of thousands of them, each fill slowed by its 46 KB parse and record.)
 */
const OVER_BOUND = { boundMiB: 16, players: 1500 } as const;

/**
 * Small players at each count of BENCH_GROWTH_CACHE_PLAYERS (1k, 10k, 100k: their bodies fit the default
 * bound, so that the spread measures hits), then typical ones past a lowered bound (OVER_BOUND; the count
 * from BENCH_GROWTH_CACHE_OVER_BOUND if given).
 */
async function cacheGrowth(): Promise<CacheGrowth> {
  const empty = await withService({ BENCH_CACHE_SEED_PLAYERS: '0' }, async (service) =>
    heldOf(service.info.heldAfterSeeding),
  );
  const points: CachePoint[] = [];
  const small = await plentifulUpstream(smallPlayer());
  try {
    for (const players of numbers('BENCH_GROWTH_CACHE_PLAYERS', [1000, 10_000, 100_000]))
      points.push(await cachePoint(small, players, 'small'));
  } finally {
    await small.close();
  }
  const card = await plentifulUpstream(cardPlayer());
  try {
    for (const players of numbers('BENCH_GROWTH_CACHE_FULL_PLAYERS', [20_000]))
      points.push(await cachePoint(card, players, 'card'));
  } finally {
    await card.close();
  }
  const typical = await plentifulUpstream(readFileSync(fixtureFile('player.json')));
  const bound = { CACHE_MEMORY_MAX_BYTES: String(OVER_BOUND.boundMiB * MiB) };
  try {
    for (const players of numbers('BENCH_GROWTH_CACHE_OVER_BOUND', [OVER_BOUND.players]))
      points.push(await cachePoint(typical, players, 'typical', bound));
  } finally {
    await typical.close();
  }
  return { empty, points };
}

// --- Ping history: 30 -> 365 days ----------------------------------------------------------------------

export interface PingPoint {
  readonly days: number;
  readonly perDay: number;
  readonly seedSeconds: number;
  /** One answer's bytes (identity). */
  readonly bodyBytes: number;
  readonly peakRssMiB?: number;
  readonly measured: Loaded;
}

const PING_PER_DAY = 1440;

async function pingPoint(days: number): Promise<PingPoint> {
  const scenario = pingHistory(PING_PER_DAY, days);
  return withService({ ...scenario.env }, async (service) => {
    const headers = bearer(service.info.token);
    const url = `${service.url}${scenario.path}`;
    const sample = await sampleOf(url, headers);
    if (sample.status !== 200) throw new Error(`${scenario.name}: the service answered ${sample.status}`);
    const measured = await load(url, { headers, seconds }, service);
    return {
      days,
      perDay: PING_PER_DAY,
      seedSeconds: (service.info.seedMs ?? Number.NaN) / 1000,
      bodyBytes: sample.body.length,
      peakRssMiB: peakRssMiB(service),
      measured,
    };
  });
}

const pingGrowth = async () => {
  const points: PingPoint[] = [];
  for (const days of numbers('BENCH_GROWTH_PING_DAYS', [30, 90, 180, 365]))
    points.push(await pingPoint(days));
  return points;
};

// --- Payload: 46 KB -> 917 KB ------------------------------------------------------------------------

export interface PayloadPoint extends Outcome {
  /** The upstream's answer (the fixture), bytes. */
  readonly fixtureBytes: number;
}

/** A cache hit of each fixture, smallest first, against its baseline: the cost of writing the bytes. */
async function payloadGrowth(upstream: FakeUpstream): Promise<PayloadPoint[]> {
  const points: [Scenario, string][] = [
    [playerHit('SQLite', 'typical'), 'player.json'],
    [profilesHit(), 'skyblock-profiles.json'],
    [playerHit('SQLite', 'large'), 'player-large.json'],
  ];
  const measured: PayloadPoint[] = [];
  for (const [scenario, fixture] of points) {
    const outcome = await runScenario(scenario, upstream, { seconds, rounds: 1 });
    measured.push({ ...outcome, fixtureBytes: statSync(fixtureFile(fixture)).size });
  }
  return measured;
}

// --- Interaction logs under 1 -> 200 writers -----------------------------------------------------------

export interface LogsPoint {
  readonly connections: number;
  readonly threads: number;
  readonly peakRssMiB?: number;
  readonly measured: Loaded;
}

/** Durable interaction logs on SQLite (group commit), with `connections` writers at once. */
async function logsPoint(connections: number): Promise<LogsPoint> {
  const scenario = interactionLogs('SQLite, group commit', {});
  return withService({ ...scenario.env }, async (service) => {
    const options = { headers: bearer(service.info.token), script: scenario.post?.script, connections };
    const measured = await load(`${service.url}${scenario.path}`, { ...options, seconds }, service);
    // wrk needs a connection per thread: one writer is one thread.
    return { connections, threads: Math.min(2, connections), peakRssMiB: peakRssMiB(service), measured };
  });
}

const logsGrowth = async () => {
  const points: LogsPoint[] = [];
  for (const connections of numbers('BENCH_GROWTH_LOG_WRITERS', [1, 10, 50, 200]))
    points.push(await logsPoint(connections));
  return points;
};

// --- The upstream budget under a burst of cold players from several owners ---------------------------

export interface OwnerBurst {
  readonly owner: number;
  readonly calls: number;
  /** The most calls in one of the owner's windows (each from its first call then, as the service counts). */
  readonly mostInOneWindow: number;
  readonly ok: number;
  readonly throttled: number;
  readonly other: number;
}

export interface BudgetOutcome {
  readonly seconds: number;
  readonly keyLimit: number;
  readonly windowSeconds: number;
  readonly sharePercent: number;
  /** One owner's lookups per window (its share of the key's limit). */
  readonly ownerLimit: number;
  readonly connectionsPerOwner: number;
  readonly owners: readonly OwnerBurst[];
  /** The most calls the fake upstream saw in one of its windows, and the calls over its limit it refused. */
  readonly mostInOneWindow: number;
  readonly refusedByUpstream: number;
}

/**
 * The key's limit and window the fake upstream announces: a window far shorter than Hypixel's 300 s, so
 * that a burst of half a minute spans several windows and shows a rate, not one window spent at once.
 */
const BURST_KEY = { limit: 120, windowSeconds: 10 } as const;
/** More owners than 100 / the default share: their shares together exceed the key, so the key binds too. */
const BURST_OWNERS = 5;
const BURST_CONNECTIONS_PER_OWNER = 10;

const ownerPrefix = (owner: number) => `c01d${owner.toString(16).padStart(4, '0')}`;

/**
 * Calls per window, a window starting at `from` and the next at the first call once it is over: as the fake
 * counts its key's, and as the service counts an owner's share (from the owner's first call).
 */
function windowCounts(calls: readonly UpstreamCall[], from: number, windowMs: number): number[] {
  const counts: number[] = [];
  let windowStart = from;
  let count = 0;
  for (const { at } of calls) {
    if (at - windowStart >= windowMs) {
      counts.push(count);
      windowStart = at;
      count = 0;
    }
    count += 1;
  }
  return [...counts, count];
}

/** The answers cold-players.lua counted, from the line it prints. */
type Answers = Pick<OwnerBurst, 'ok' | 'throttled' | 'other'>;
function answersOf(output: string): Answers {
  const line = /^answers (\{.*\})$/m.exec(output)?.[1];
  if (!line) throw new Error(`cold-players.lua printed no answers:\n${output}`);
  return JSON.parse(line) as Answers;
}

/**
 * Several owners, each flooding cold players at once for BENCH_BUDGET_SECONDS (30): how many calls reach
 * the upstream per minute against the key's budget and each owner's share, and how many answers were 200
 * (fetched) and 429 (over a share or the key).
 */
async function budgetBurst(): Promise<BudgetOutcome> {
  const burstSeconds = Number(process.env.BENCH_BUDGET_SECONDS ?? 30);
  const upstream = await startFakeUpstream({
    rateLimit: BURST_KEY.limit,
    rateLimitWindowSeconds: BURST_KEY.windowSeconds,
    anyPlayer: smallPlayer(),
  });
  const env = {
    ...upstreamEnv(upstream),
    HYPIXEL_RATE_LIMIT_WINDOW_SECONDS: String(BURST_KEY.windowSeconds),
    BENCH_TOKEN_OWNERS: String(BURST_OWNERS),
  };
  try {
    return await withService(env, async (service) => {
      const tokens = service.info.tokens ?? [];
      const sharePercent = service.info.ownerSharePercent ?? Number.NaN;
      // The fake's window starts now, as the burst does.
      upstream.reset();
      const startedAt = Date.now();
      const outputs = await Promise.all(
        tokens.map((token, index) =>
          wrkOutput(`${service.url}/`, {
            headers: bearer(token),
            script: 'bench/cold-players.lua',
            scriptArgs: [ownerPrefix(index + 1)],
            connections: BURST_CONNECTIONS_PER_OWNER,
            threads: 1,
            seconds: burstSeconds,
          }),
        ),
      );
      const measuredSeconds = (Date.now() - startedAt) / 1000;
      const calls = upstream.callsTo('/v2/player');
      const windowMs = BURST_KEY.windowSeconds * 1000;
      const counts = windowCounts(calls, startedAt, windowMs);
      return {
        seconds: measuredSeconds,
        keyLimit: BURST_KEY.limit,
        windowSeconds: BURST_KEY.windowSeconds,
        sharePercent,
        ownerLimit: shareOf(BURST_KEY.limit, sharePercent),
        connectionsPerOwner: BURST_CONNECTIONS_PER_OWNER,
        owners: outputs.map((output, index) => {
          const own = calls.filter((call) => call.query.get('uuid')?.startsWith(ownerPrefix(index + 1)));
          const windows = windowCounts(own, own[0]?.at ?? startedAt, windowMs);
          return {
            owner: index + 1,
            calls: own.length,
            mostInOneWindow: Math.max(...windows),
            ...answersOf(output),
          };
        }),
        mostInOneWindow: Math.max(...counts),
        refusedByUpstream: counts.reduce((sum, count) => sum + Math.max(0, count - BURST_KEY.limit), 0),
      };
    });
  } finally {
    await upstream.close();
  }
}

// --- All of it ---------------------------------------------------------------------------------------

export interface Growth {
  cache?: CacheGrowth;
  ping?: PingPoint[];
  payload?: PayloadPoint[];
  logs?: LogsPoint[];
  budget?: BudgetOutcome;
}

/** The parts, by the name BENCH_ONLY selects them with. */
export const GROWTH_PARTS = {
  cache: 'growth: cache',
  ping: 'growth: ping history',
  payload: 'growth: payload',
  logs: 'growth: interaction logs',
  budget: 'growth: upstream budget',
} as const satisfies Record<keyof Growth, string>;

/** Runs the parts `selected` names, in turn, saying how long each took. */
export async function runGrowth(
  upstream: FakeUpstream,
  selected: (name: string) => boolean,
): Promise<Growth> {
  const growth: Growth = {};
  const timed = async <T>(name: string, part: () => Promise<T>): Promise<T | undefined> => {
    if (!selected(name)) return undefined;
    const startedAt = Date.now();
    const result = await part();
    console.log(`${name}: ${((Date.now() - startedAt) / 1000).toFixed(0)} s`);
    return result;
  };
  growth.cache = await timed(GROWTH_PARTS.cache, cacheGrowth);
  growth.ping = await timed(GROWTH_PARTS.ping, pingGrowth);
  growth.payload = await timed(GROWTH_PARTS.payload, () => payloadGrowth(upstream));
  growth.logs = await timed(GROWTH_PARTS.logs, logsGrowth);
  growth.budget = await timed(GROWTH_PARTS.budget, budgetBurst);
  return growth;
}
