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
});

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
  if (!validateEnv(env)) {
    throw new ConfigError((validateEnv.errors ?? []).map((error) => describe(error, given)));
  }
  return deepFreeze(toConfig(env));
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
  };
}

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
  return `${name} ${expected} (got ${JSON.stringify(given[name])})`;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
