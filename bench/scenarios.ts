/**
 * Load scenarios. Each is one GET answered by the service and, for comparison in the same run, by a bare
 * node:http server writing the bytes the service wrote; or POSTs made by a wrk script (`post`), answered by
 * the service and, for comparison, by the same service process on a twin path that stores nothing.
 */
export interface Scenario {
  readonly name: string;
  readonly path: string;
  /** What one request carries, when it is more than one item (ping samples): the table reports items/s too. */
  readonly itemsPerRequest?: number;
  /** Environment for the service process. */
  readonly env?: Readonly<Record<string, string>>;
  /** Send a bearer token with every grant (the service process issues it). */
  readonly authenticated?: boolean;
  /** More request headers (`accept-encoding` for a compressed scenario). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Point the service at the fake upstream (started by the runner). */
  readonly upstream?: boolean;
  /** POSTs: the wrk script that makes them, and the twin path answering the same requests as a no-op. */
  readonly post?: { readonly script: string; readonly baselinePath: string };
}

const LOG_PATH = '/messenger/logging/interaction';
/** Interaction logs, each durable (committed) before its 200, against the no-op twin of the route. */
export const interactionLogs = (name: string, env: Record<string, string>): Scenario => ({
  name: `POST ${LOG_PATH}, ${name}`,
  path: LOG_PATH,
  env,
  authenticated: true,
  post: { script: 'bench/interaction-log.lua', baselinePath: `/noop${LOG_PATH}` },
});

const PING_PLAYER = '20934ef9488c465180a78f861586b4cf';
/**
 * `days` of pings (a year unless given), `perDay` samples a day: the read costs the same whatever `perDay`
 * (aggregates only), and grows with the days (one row each).
 */
export const pingHistory = (perDay: number, days = 365): Scenario => ({
  name: `GET /ping/{uuid}, ${days} days of ${perDay} samples`,
  path: `/ping/${PING_PLAYER}`,
  env: {
    BENCH_PING_SEED_DAYS: String(days),
    BENCH_PING_SEED_PER_DAY: String(perDay),
    PING_RETENTION_DAYS: '400',
  },
  authenticated: true,
});

const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** The deployment modes: the embedded default, and the shared parts that several instances use. */
const MODES = {
  SQLite: {},
  'SQLite + Redis': { REDIS_URL },
  PostgreSQL: { BENCH_DATABASE: 'postgres' },
  'PostgreSQL + Redis': { BENCH_DATABASE: 'postgres', REDIS_URL },
} as const satisfies Record<string, Record<string, string>>;
export const PLAYERS = {
  // 917 KB: the cost of writing the bytes dominates.
  large: 'ef962ec2df6e48a2ac9d6062c1b84652',
  // 46 KB: per-request overhead (token check, routing, hooks, headers) weighs more.
  typical: '20934ef9488c465180a78f861586b4cf',
} as const;

/** A cache hit of `GET /player/{uuid}` with a token, in one deployment mode. */
export const playerHit = (
  mode: keyof typeof MODES,
  player: keyof typeof PLAYERS,
  encoding?: 'br' | 'gzip',
): Scenario => ({
  name: `GET /player/{uuid} cache hit, ${mode}, ${player} player${encoding ? `, ${encoding}` : ''}`,
  path: `/player/${PLAYERS[player]}`,
  env: { CACHE_PLAYER_FRESH_SECONDS: '86400', ...MODES[mode] },
  authenticated: true,
  upstream: true,
  ...(encoding ? { headers: { 'accept-encoding': encoding } } : {}),
});

/** The owner of the SkyBlock profiles fixture (214 KB, two profiles). */
const PROFILES_PLAYER = 'ec1811e6822b4843bcd4fef82f75deb7';
/** A cache hit of `GET /gamemode/profiles/{uuid}` with a token, on SQLite. */
export const profilesHit = (): Scenario => ({
  name: 'GET /gamemode/profiles/{uuid} cache hit, SQLite',
  path: `/gamemode/profiles/${PROFILES_PLAYER}`,
  env: { CACHE_PROFILES_FRESH_SECONDS: '86400' },
  authenticated: true,
  upstream: true,
});

export const scenarios: readonly Scenario[] = [
  { name: 'GET /health', path: '/health' },
  playerHit('SQLite', 'typical'),
  playerHit('SQLite', 'large'),
  playerHit('SQLite', 'large', 'br'),
  playerHit('SQLite', 'large', 'gzip'),
  playerHit('SQLite + Redis', 'typical'),
  playerHit('SQLite + Redis', 'large'),
  playerHit('PostgreSQL', 'typical'),
  playerHit('PostgreSQL + Redis', 'typical'),
  playerHit('PostgreSQL + Redis', 'large'),
  interactionLogs('SQLite, group commit', {}),
  interactionLogs('SQLite, one commit per request', { GROUP_COMMIT_MAX_BATCH: '1' }),
  interactionLogs('PostgreSQL, group commit', { BENCH_DATABASE: 'postgres' }),
  interactionLogs('PostgreSQL, one commit per request', {
    BENCH_DATABASE: 'postgres',
    GROUP_COMMIT_MAX_BATCH: '1',
  }),
  pingHistory(1440),
  pingHistory(2880),
  {
    name: 'POST /ping/{uuid}, 100 samples a request, SQLite',
    path: '/ping/PLAYER',
    itemsPerRequest: 100,
    authenticated: true,
    post: { script: 'bench/ping-samples.lua', baselinePath: '/noop/ping/PLAYER' },
  },
  {
    name: 'POST /ping/{uuid}, 100 samples a request, PostgreSQL',
    path: '/ping/PLAYER',
    itemsPerRequest: 100,
    env: { BENCH_DATABASE: 'postgres' },
    authenticated: true,
    post: { script: 'bench/ping-samples.lua', baselinePath: '/noop/ping/PLAYER' },
  },
];
