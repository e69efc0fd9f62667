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
  /** Point the service at the fake upstream (started by the runner). */
  readonly upstream?: boolean;
  /** POSTs: the wrk script that makes them, and the twin path answering the same requests as a no-op. */
  readonly post?: { readonly script: string; readonly baselinePath: string };
}

const LOG_PATH = '/messenger/logging/interaction';
/** Interaction logs, each durable (committed) before its 200, against the no-op twin of the route. */
const interactionLogs = (name: string, env: Record<string, string>): Scenario => ({
  name: `POST ${LOG_PATH}, ${name}`,
  path: LOG_PATH,
  env,
  authenticated: true,
  post: { script: 'bench/interaction-log.lua', baselinePath: `/noop${LOG_PATH}` },
});

const PING_PLAYER = '20934ef9488c465180a78f861586b4cf';
/** A year of pings, `perDay` samples a day: the read costs the same whatever `perDay` (aggregates only). */
const pingHistory = (perDay: number): Scenario => ({
  name: `GET /ping/{uuid}, 365 days of ${perDay} samples`,
  path: `/ping/${PING_PLAYER}`,
  env: {
    BENCH_PING_SEED_DAYS: '365',
    BENCH_PING_SEED_PER_DAY: String(perDay),
    PING_RETENTION_DAYS: '400',
  },
  authenticated: true,
});

export const scenarios: readonly Scenario[] = [
  { name: 'GET /health', path: '/health' },
  {
    // The hot path: a large player (917 KB) served from the in-process cache, token checked on every request.
    name: 'GET /player/{uuid} cache hit, large player',
    path: '/player/ef962ec2df6e48a2ac9d6062c1b84652',
    env: { CACHE_PLAYER_FRESH_SECONDS: '86400' },
    authenticated: true,
    upstream: true,
  },
  {
    // The same with a typical player (46 KB): per-request overhead weighs more here.
    name: 'GET /player/{uuid} cache hit, typical player',
    path: '/player/20934ef9488c465180a78f861586b4cf',
    env: { CACHE_PLAYER_FRESH_SECONDS: '86400' },
    authenticated: true,
    upstream: true,
  },
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
