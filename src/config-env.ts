import { type Static, Type } from 'typebox';

/**
 * The environment the service reads, with its defaults: the one place every variable is declared. A module
 * with settings adds its variables here and its section in config.ts. Every variable is documented in
 * README.md; keep the two in step.
 */
const HTTP_URL = '^https?://[^\\s]+$';
/** `*`, or a comma-separated list of origins (scheme, host and optional port; no path). */
const CORS_ORIGINS_PATTERN = '^(\\*|https?://[^\\s/,]+(\\s*,\\s*https?://[^\\s/,]+)*)$';

export const EnvSchema = Type.Object({
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
  TOKEN_CACHE_MAX_ENTRIES: Type.Integer({ minimum: 0, maximum: 10_000_000, default: 100_000 }),
  TOKEN_CACHE_SECONDS: Type.Integer({ minimum: 0, maximum: 86_400, default: 300 }),
  RATE_LIMIT_AUTH_PER_MINUTE: Type.Integer({ minimum: 1, maximum: 100_000, default: 30 }),
  INTERACTION_LOG_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 3650, default: 90 }),
  RETENTION_JOB_INTERVAL_SECONDS: Type.Integer({ minimum: 1, maximum: 7 * 86_400, default: 3600 }),
  GROUP_COMMIT_MAX_BATCH: Type.Integer({ minimum: 1, maximum: 1000, default: 256 }),
  GROUP_COMMIT_LINGER_MS: Type.Integer({ minimum: 0, maximum: 1000, default: 0 }),
  GROUP_COMMIT_MAX_QUEUE: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 10_000 }),
  PING_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 3650, default: 90 }),
  PING_HISTORY_PER_DAY: Type.Integer({ minimum: 1, maximum: 100_000, default: 1440 }),
  PING_BODY_LIMIT_BYTES: Type.Integer({ minimum: 1024, maximum: 16 * 1024 * 1024, default: 1024 * 1024 }),
  PING_MAX_QUEUED_SAMPLES: Type.Integer({ minimum: 1000, maximum: 100_000_000, default: 200_000 }),
  PING_MAX_FUTURE_SECONDS: Type.Integer({ minimum: 0, maximum: 3600, default: 60 }),
  MESSENGER_MAX_LINKED_ACCOUNTS: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
  APPLICATIONS_MAX_PENDING_PER_OWNER: Type.Integer({ minimum: 1, maximum: 1000, default: 5 }),
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

export type Env = Static<typeof EnvSchema>;
