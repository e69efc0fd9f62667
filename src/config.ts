import { Ajv, type ErrorObject } from 'ajv';
import { type Static, Type } from 'typebox';

/**
 * The environment the service reads, with its defaults. Every variable is documented in README.md;
 * keep the two in step.
 */
const EnvSchema = Type.Object({
  NODE_ENV: Type.Enum(['development', 'test', 'production'], { default: 'development' }),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000 }),
  LOG_LEVEL: Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { default: 'info' }),
  PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://[^\\s/]+(/[^\\s]*)?$' })),
  TRUST_PROXY: Type.Boolean({ default: false }),
  BODY_LIMIT_BYTES: Type.Integer({ minimum: 1024, maximum: 16 * 1024 * 1024, default: 64 * 1024 }),
  SHUTDOWN_TIMEOUT_MS: Type.Integer({ minimum: 0, maximum: 600_000, default: 10_000 }),
  DATABASE_URL: Type.String({
    pattern: '^(sqlite:.+|postgres(ql)?://.+)$',
    default: 'sqlite:./data/service.sqlite',
  }),
  DATABASE_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 200, default: 10 }),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://.+$' })),
  DATA_DIR: Type.String({ minLength: 1, default: './data' }),
  JWT_SECRET: Type.Optional(Type.String()),
  JWT_ISSUER: Type.String({ minLength: 1, default: 'player-data-service' }),
  JWT_AUDIENCE: Type.String({ minLength: 1, default: 'player-data-api' }),
  JWT_CLOCK_LEEWAY_SECONDS: Type.Integer({ minimum: 0, maximum: 60, default: 30 }),
  TOKEN_TTL_SECONDS: Type.Integer({ minimum: 60, maximum: 30 * 86_400, default: 3600 }),
  TOKEN_REFRESH_WINDOW_SECONDS: Type.Integer({ minimum: 0, maximum: 90 * 86_400, default: 7 * 86_400 }),
  RATE_LIMIT_AUTH_PER_MINUTE: Type.Integer({ minimum: 1, maximum: 100_000, default: 30 }),
});

/** HS256 is only as strong as its key: RFC 7518 asks for at least the hash size, 256 bits. */
export const MIN_JWT_SECRET_BYTES = 32;

type Env = Static<typeof EnvSchema>;

export type LogLevel = Env['LOG_LEVEL'];

export type DatabaseConfig =
  | { readonly dialect: 'sqlite'; readonly path: string }
  | { readonly dialect: 'postgres'; readonly url: string; readonly poolSize: number };

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
    readonly shutdownTimeoutMs: number;
  };
  readonly database: DatabaseConfig;
  readonly redisUrl: string | undefined;
  /** Where the service keeps files of its own (the generated JWT secret outside production). */
  readonly dataDir: string;
  readonly auth: AuthConfig;
}

export interface AuthConfig {
  /** Undefined outside production when not set: one is generated and kept in the data directory. */
  readonly jwtSecret: string | undefined;
  readonly issuer: string;
  readonly audience: string;
  readonly clockLeewaySeconds: number;
  readonly tokenTtlSeconds: number;
  /** How long after its expiry a token may still be exchanged at /auth/refresh. */
  readonly refreshWindowSeconds: number;
  /** Requests per minute and client address to the token paths (/auth/refresh). */
  readonly rateLimitPerMinute: number;
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
      shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
    },
    database: env.DATABASE_URL.startsWith('sqlite:')
      ? { dialect: 'sqlite', path: env.DATABASE_URL.slice('sqlite:'.length) }
      : { dialect: 'postgres', url: env.DATABASE_URL, poolSize: env.DATABASE_POOL_SIZE },
    redisUrl: env.REDIS_URL,
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

/** Variables whose values never appear in an error message. */
const SECRET_VARIABLES = new Set(['JWT_SECRET']);

/** What each pattern means, said in words a person setting the variable understands. */
const PATTERN_HINTS: Record<string, string> = {
  DATABASE_URL: 'must be sqlite:<path> or postgres://...',
  REDIS_URL: 'must be redis://... or rediss://...',
  PUBLIC_URL: 'must be an http(s) URL such as https://api.example.com',
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
