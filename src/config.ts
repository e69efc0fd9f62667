import { Ajv, type ErrorObject } from 'ajv';
import { type Static, Type } from 'typebox';
import type { HealthModuleDeps } from './modules/health/health.module.js';
import type { PlayersSettings } from './modules/players/players.module.js';
import type { ProfilesModuleDeps } from './modules/profiles/profiles.module.js';
import type { TokensModuleDeps } from './modules/tokens/tokens.module.js';
import { MIN_JWT_SECRET_BYTES } from './platform/auth/jwt-secret.js';
import type { CachingSettings } from './platform/cache/caching.js';
import type { DatabaseSettings } from './platform/db/database.js';
import type { HttpTimeouts } from './platform/http/timeouts.js';
import type { LogLevel } from './platform/logger.js';
import type { UpstreamSettings } from './upstream/upstreams.js';

/**
 * The environment the service reads, with its defaults: the one place every variable is declared. Each
 * section of `Config` is the settings type of the part that uses it (declared beside that part); a module
 * with settings adds its variables here and its section below. Every variable is documented in README.md;
 * keep the two in step.
 */
const HTTP_URL = '^https?://[^\\s]+$';
/** `*`, or a comma-separated list of origins (scheme, host and optional port; no path). */
const CORS_ORIGINS_PATTERN = '^(\\*|https?://[^\\s/,]+(\\s*,\\s*https?://[^\\s/,]+)*)$';

const EnvSchema = Type.Object({
  NODE_ENV: Type.Enum(['development', 'test', 'production'], { default: 'development' }),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000 }),
  LOG_LEVEL: Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { default: 'info' }),
  PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://[^\\s/]+(/[^\\s]*)?$' })),
  TRUST_PROXY: Type.Boolean({ default: false }),
  BODY_LIMIT_BYTES: Type.Integer({ minimum: 1024, maximum: 16 * 1024 * 1024, default: 64 * 1024 }),
  BODY_MAX_DEPTH: Type.Integer({ minimum: 1, maximum: 1000, default: 64 }),
  REQUEST_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 30_000 }),
  HEADERS_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 10_000 }),
  CONNECTION_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 60_000 }),
  KEEP_ALIVE_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 72_000 }),
  SHUTDOWN_TIMEOUT_MS: Type.Integer({ minimum: 0, maximum: 600_000, default: 10_000 }),
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16, maxLength: 512, pattern: '^[\\x21-\\x7e]+$' })),
  CORS_ORIGINS: Type.Optional(Type.String({ pattern: CORS_ORIGINS_PATTERN })),
  DATABASE_URL: Type.String({
    pattern: '^(sqlite:.+|postgres(ql)?://.+)$',
    default: 'sqlite:./data/service.sqlite',
  }),
  DATABASE_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 200, default: 10 }),
  DATABASE_CONNECT_TIMEOUT_SECONDS: Type.Integer({ minimum: 0, maximum: 3600, default: 30 }),
  DATABASE_POOL_CONNECT_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 120_000, default: 5000 }),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://.+$' })),
  REDIS_KEY_PREFIX: Type.String({ pattern: '^[A-Za-z0-9:_-]{0,64}$', default: 'pds:' }),
  DATA_DIR: Type.String({ minLength: 1, default: './data' }),
  JWT_SECRET: Type.Optional(Type.String()),
  JWT_ISSUER: Type.String({ minLength: 1, default: 'player-data-service' }),
  JWT_AUDIENCE: Type.String({ minLength: 1, default: 'player-data-api' }),
  JWT_CLOCK_LEEWAY_SECONDS: Type.Integer({ minimum: 0, maximum: 60, default: 30 }),
  TOKEN_TTL_SECONDS: Type.Integer({ minimum: 60, maximum: 30 * 86_400, default: 3600 }),
  TOKEN_REFRESH_WINDOW_SECONDS: Type.Integer({ minimum: 0, maximum: 90 * 86_400, default: 7 * 86_400 }),
  RATE_LIMIT_AUTH_PER_MINUTE: Type.Integer({ minimum: 1, maximum: 100_000, default: 30 }),
  HYPIXEL_API_KEY: Type.Optional(Type.String({ minLength: 1 })),
  HYPIXEL_API_URL: Type.String({ pattern: HTTP_URL, default: 'https://api.hypixel.net' }),
  MOJANG_API_URL: Type.String({ pattern: HTTP_URL, default: 'https://api.mojang.com' }),
  HYPIXEL_RATE_LIMIT_WINDOW_SECONDS: Type.Integer({ minimum: 1, default: 300 }),
  MOJANG_RATE_LIMIT: Type.Integer({ minimum: 1, default: 600 }),
  MOJANG_RATE_LIMIT_WINDOW_SECONDS: Type.Integer({ minimum: 1, default: 600 }),
  UPSTREAM_CONNECT_TIMEOUT_MS: Type.Integer({ minimum: 50, maximum: 60_000, default: 2000 }),
  UPSTREAM_TIMEOUT_MS: Type.Integer({ minimum: 50, maximum: 120_000, default: 5000 }),
  UPSTREAM_RETRIES: Type.Integer({ minimum: 0, maximum: 5, default: 2 }),
  UPSTREAM_RETRY_BASE_MS: Type.Integer({ minimum: 1, maximum: 10_000, default: 100 }),
  UPSTREAM_BREAKER_FAILURES: Type.Integer({ minimum: 1, maximum: 1000, default: 5 }),
  UPSTREAM_BREAKER_COOLDOWN_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 30_000 }),
  UPSTREAM_CONNECTIONS: Type.Integer({ minimum: 1, maximum: 1000, default: 32 }),
  UPSTREAM_OWNER_SHARE_PERCENT: Type.Integer({ minimum: 1, maximum: 100, default: 25 }),
  CACHE_PLAYER_FRESH_SECONDS: Type.Integer({ minimum: 0, default: 60 }),
  CACHE_PROFILES_FRESH_SECONDS: Type.Integer({ minimum: 0, default: 120 }),
  CACHE_USERNAME_FRESH_SECONDS: Type.Integer({ minimum: 0, default: 6 * 3600 }),
  CACHE_NOT_FOUND_FRESH_SECONDS: Type.Integer({ minimum: 0, default: 300 }),
  CACHE_STALE_IF_ERROR_SECONDS: Type.Integer({ minimum: 0, default: 86_400 }),
  CACHE_MEMORY_MAX_BYTES: Type.Integer({ minimum: 1024 * 1024, default: 128 * 1024 * 1024 }),
  SINGLE_FLIGHT_LOCK_MS: Type.Integer({ minimum: 100, maximum: 120_000, default: 15_000 }),
});

type Env = Static<typeof EnvSchema>;

export interface Config {
  readonly production: boolean;
  readonly logLevel: LogLevel;
  readonly server: {
    readonly host: string;
    readonly port: number;
    /** Base of links the service writes (the `documentation` of errors); the request's own origin when unset. */
    readonly publicUrl: string | undefined;
    readonly trustProxy: boolean;
    readonly bodyLimitBytes: number;
    /** How deep arrays and objects may nest in a JSON body. */
    readonly bodyMaxDepth: number;
    readonly timeouts: HttpTimeouts;
    readonly shutdownTimeoutMs: number;
    /** How long the start waits for the database to answer before it gives up. */
    readonly databaseConnectTimeoutMs: number;
    /** Origins browsers may call the API from; empty: CORS is off. `*` allows any origin. */
    readonly corsOrigins: readonly string[];
  };
  readonly database: DatabaseSettings;
  readonly redisUrl: string | undefined;
  /** Prepended to every Redis key, so that several deployments can share one Redis. */
  readonly redisKeyPrefix: string;
  /** Where the service keeps files of its own (the generated JWT secret outside production). */
  readonly dataDir: string;
  /** Tokens: signing, lifetimes, the refresh window and its rate limit (the tokens module's settings). */
  readonly auth: TokensModuleDeps['settings'];
  /** Operations (`/metrics`'s bearer token, when it is protected). */
  readonly operations: HealthModuleDeps['settings'];
  readonly upstream: UpstreamSettings;
  /** The cache, and the freshness of each cached resource (the players and profiles modules' settings). */
  readonly cache: CachingSettings &
    PlayersSettings &
    Pick<ProfilesModuleDeps['settings'], 'profilesFreshSeconds'>;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

const validateEnv = new Ajv({ allErrors: true, coerceTypes: true, useDefaults: true }).compile<Env>(
  EnvSchema,
);

/** Reads the environment once into a frozen, typed Config; throws a ConfigError naming every bad variable. */
export function loadConfig(environment: NodeJS.ProcessEnv): Config {
  const env: Record<string, unknown> = {};
  for (const key of Object.keys(EnvSchema.properties)) {
    const value = environment[key];
    // An empty variable (`REDIS_URL=`) means "not set", as it does for most tools.
    if (value !== undefined && value !== '') env[key] = value;
  }
  const given = { ...env };
  const problems = validateEnv(env) ? [] : (validateEnv.errors ?? []).map((error) => describe(error, given));
  problems.push(...secretProblems(given));
  if (problems.length === 0) problems.push(...timeoutProblems(env as Env), ...corsProblems(env as Env));
  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze(toConfig(env as Env));
}

function toConfig(env: Env): Config {
  return {
    production: env.NODE_ENV === 'production',
    logLevel: env.LOG_LEVEL,
    server: {
      host: env.HOST,
      port: env.PORT,
      publicUrl: env.PUBLIC_URL?.replace(/\/+$/, ''),
      trustProxy: env.TRUST_PROXY,
      bodyLimitBytes: env.BODY_LIMIT_BYTES,
      bodyMaxDepth: env.BODY_MAX_DEPTH,
      timeouts: {
        requestMs: env.REQUEST_TIMEOUT_MS,
        headersMs: env.HEADERS_TIMEOUT_MS,
        connectionMs: env.CONNECTION_TIMEOUT_MS,
        keepAliveMs: env.KEEP_ALIVE_TIMEOUT_MS,
      },
      shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
      databaseConnectTimeoutMs: env.DATABASE_CONNECT_TIMEOUT_SECONDS * 1000,
      corsOrigins: env.CORS_ORIGINS ? corsOriginsOf(env.CORS_ORIGINS) : [],
    },
    database: env.DATABASE_URL.startsWith('sqlite:')
      ? { dialect: 'sqlite', path: env.DATABASE_URL.slice('sqlite:'.length) }
      : {
          dialect: 'postgres',
          url: env.DATABASE_URL,
          poolSize: env.DATABASE_POOL_SIZE,
          connectionTimeoutMs: env.DATABASE_POOL_CONNECT_TIMEOUT_MS,
        },
    redisUrl: env.REDIS_URL,
    redisKeyPrefix: env.REDIS_KEY_PREFIX,
    dataDir: env.DATA_DIR,
    auth: {
      jwtSecret: env.JWT_SECRET,
      issuer: env.JWT_ISSUER,
      audience: env.JWT_AUDIENCE,
      clockLeewaySeconds: env.JWT_CLOCK_LEEWAY_SECONDS,
      tokenTtlSeconds: env.TOKEN_TTL_SECONDS,
      refreshWindowSeconds: env.TOKEN_REFRESH_WINDOW_SECONDS,
      rateLimitPerMinute: env.RATE_LIMIT_AUTH_PER_MINUTE,
    },
    operations: { metricsToken: env.METRICS_TOKEN },
    upstream: {
      hypixelApiKey: env.HYPIXEL_API_KEY,
      hypixelUrl: env.HYPIXEL_API_URL.replace(/\/+$/, ''),
      mojangUrl: env.MOJANG_API_URL.replace(/\/+$/, ''),
      hypixelRateWindowMs: env.HYPIXEL_RATE_LIMIT_WINDOW_SECONDS * 1000,
      mojangRateLimit: {
        limit: env.MOJANG_RATE_LIMIT,
        windowMs: env.MOJANG_RATE_LIMIT_WINDOW_SECONDS * 1000,
      },
      connectTimeoutMs: env.UPSTREAM_CONNECT_TIMEOUT_MS,
      timeoutMs: env.UPSTREAM_TIMEOUT_MS,
      retries: env.UPSTREAM_RETRIES,
      retryBaseMs: env.UPSTREAM_RETRY_BASE_MS,
      breakerFailures: env.UPSTREAM_BREAKER_FAILURES,
      breakerCooldownMs: env.UPSTREAM_BREAKER_COOLDOWN_MS,
      connections: env.UPSTREAM_CONNECTIONS,
      ownerSharePercent: env.UPSTREAM_OWNER_SHARE_PERCENT,
    },
    cache: {
      playerFreshSeconds: env.CACHE_PLAYER_FRESH_SECONDS,
      profilesFreshSeconds: env.CACHE_PROFILES_FRESH_SECONDS,
      usernameFreshSeconds: env.CACHE_USERNAME_FRESH_SECONDS,
      notFoundFreshSeconds: env.CACHE_NOT_FOUND_FRESH_SECONDS,
      staleIfErrorSeconds: env.CACHE_STALE_IF_ERROR_SECONDS,
      memoryMaxBytes: env.CACHE_MEMORY_MAX_BYTES,
      singleFlightLockMs: env.SINGLE_FLIGHT_LOCK_MS,
    },
  };
}

function secretProblems(given: Record<string, unknown>): string[] {
  const secret = given.JWT_SECRET;
  if (typeof secret === 'string' && Buffer.byteLength(secret) < MIN_JWT_SECRET_BYTES) {
    // The value itself is never echoed: it is a secret.
    return [`JWT_SECRET must be at least ${MIN_JWT_SECRET_BYTES} bytes (got ${Buffer.byteLength(secret)})`];
  }
  if (secret === undefined && given.NODE_ENV === 'production') {
    return [`JWT_SECRET is required when NODE_ENV=production (at least ${MIN_JWT_SECRET_BYTES} bytes)`];
  }
  return [];
}

/** Node refuses a server whose headers may take longer than the whole request. */
function timeoutProblems(env: Env): string[] {
  return env.HEADERS_TIMEOUT_MS > env.REQUEST_TIMEOUT_MS
    ? [
        `HEADERS_TIMEOUT_MS must not be more than REQUEST_TIMEOUT_MS (got ${env.HEADERS_TIMEOUT_MS} > ${env.REQUEST_TIMEOUT_MS})`,
      ]
    : [];
}

const corsOriginsOf = (value: string): string[] => value.split(',').map((origin) => origin.trim());

/**
 * Browsers send `Origin` serialized (lowercase scheme and host, no default port) and it is compared
 * exactly, so an entry that is not its own serialization (`https://Example.com`, `https://x.com:443`, a
 * user, query or fragment) would never match: refused, with what a browser would send.
 */
function corsProblems(env: Env): string[] {
  if (env.CORS_ORIGINS === undefined || env.CORS_ORIGINS === '*') return [];
  return corsOriginsOf(env.CORS_ORIGINS).flatMap((entry) => {
    const origin = URL.canParse(entry) ? new URL(entry).origin : undefined;
    if (origin === entry) return [];
    return [
      origin === undefined
        ? `CORS_ORIGINS entry ${JSON.stringify(entry)} is not a valid origin (scheme://host[:port])`
        : `CORS_ORIGINS entry ${JSON.stringify(entry)} is not an origin as a browser sends it: write ${origin} (lowercase, no default port, user, query or fragment)`,
    ];
  });
}

/** Variables whose values never appear in an error message. */
const SECRET_VARIABLES = new Set(['JWT_SECRET', 'HYPIXEL_API_KEY', 'METRICS_TOKEN']);

/** What each pattern means, said in words a person setting the variable understands. */
const PATTERN_HINTS: Record<string, string> = {
  DATABASE_URL: 'must be sqlite:<path> or postgres://...',
  REDIS_URL: 'must be redis://... or rediss://...',
  PUBLIC_URL: 'must be an http(s) URL such as https://api.example.com',
  CORS_ORIGINS:
    'must be * or a comma-separated list of origins such as https://a.example,https://b.example:8443',
  METRICS_TOKEN: 'must be printable ASCII without spaces',
  HYPIXEL_API_URL: 'must be an http(s) URL such as https://api.hypixel.net',
  MOJANG_API_URL: 'must be an http(s) URL such as https://api.mojang.com',
};

function describe(error: ErrorObject, given: Record<string, unknown>): string {
  const name = error.instancePath.slice(1);
  const expected =
    error.keyword === 'enum'
      ? `must be one of ${(error.params as { allowedValues: string[] }).allowedValues.join(', ')}`
      : error.keyword === 'pattern'
        ? (PATTERN_HINTS[name] ?? `must match ${error.params.pattern}`)
        : (error.message ?? 'is invalid');
  return SECRET_VARIABLES.has(name)
    ? `${name} ${expected}`
    : `${name} ${expected} (got ${JSON.stringify(given[name])})`;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
