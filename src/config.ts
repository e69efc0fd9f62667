import { Ajv } from 'ajv';
import { type Env, EnvSchema } from './config-env.js';
import {
  corsOriginsOf,
  corsProblems,
  describe,
  discordProblems,
  secretProblems,
  timeoutProblems,
} from './config-problems.js';
import type { ApplicationsModuleDeps } from './modules/applications/applications.module.js';
import type { HealthModuleDeps } from './modules/health/health.module.js';
import type { InteractionsModuleDeps } from './modules/interactions/interactions.module.js';
import type { MessengerUsersModuleDeps } from './modules/messenger-users/messenger-users.module.js';
import type { OwnerBudgetsSettings } from './modules/owner-budgets/owner-budgets.service.js';
import type { OwnerUsageModuleDeps } from './modules/owner-usage/owner-usage.module.js';
import type { PingModuleDeps } from './modules/ping/ping.module.js';
import type { PlayersModuleDeps, PlayersSettings } from './modules/players/players.module.js';
import type { PortalModuleDeps } from './modules/portal/portal.module.js';
import type { ProfilesModuleDeps } from './modules/profiles/profiles.module.js';
import type { TokensModuleDeps } from './modules/tokens/tokens.module.js';
import type { CachingSettings } from './platform/cache/caching.js';
import type { DatabaseSettings } from './platform/db/database.js';
import type { HttpTimeouts } from './platform/http/timeouts.js';
import type { WorkBudgetSettings } from './platform/limits/work-budget.js';
import type { LogLevel } from './platform/logger.js';
import type { UpstreamSettings } from './upstream/upstreams.js';

/**
 * The configuration, read once from the environment (`config-env.ts` declares every variable, with its
 * default; `config-problems.ts` says what is wrong with a value). Each section is the settings type of the
 * part that uses it (declared beside that part), so that no lower layer imports this file.
 */
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
  readonly auth: TokensModuleDeps['settings'] & {
    /** Undefined outside production when not set: one is generated and kept in `dataDir`. */
    readonly jwtSecret: string | undefined;
  };
  /**
   * Each owner's budget of the service's work (units per window), how long a refusal is held, and how soon
   * an operator's change of one owner's budget applies.
   */
  readonly workBudget: WorkBudgetSettings & OwnerBudgetsSettings;
  /** Owners' daily usage (what the portal shows): how long it is kept. */
  readonly ownerUsage: OwnerUsageModuleDeps['settings'];
  /** Interaction logs: their retention, and how their writes are grouped into commits. */
  readonly interactions: InteractionsModuleDeps['settings'];
  /** Ping samples: their retention, each day's history cap, the ingestion body limit, group commit. */
  readonly ping: PingModuleDeps['settings'];
  /** Players' snapshots (their history and sessions): how long they are kept. */
  readonly history: PlayersModuleDeps['history'];
  /** Messenger users: how many Minecraft accounts one may link. */
  readonly messengerUsers: MessengerUsersModuleDeps['settings'];
  /** Developer applications: the pending limit, and the rate limit of approvals (as for /auth/refresh). */
  readonly applications: ApplicationsModuleDeps['settings'];
  /** The developer portal: Discord sign-in (off when not configured), sessions, reviewers. */
  readonly portal: PortalModuleDeps['settings'];
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
  if (problems.length === 0)
    problems.push(
      ...timeoutProblems(env as Env),
      ...corsProblems(env as Env),
      ...discordProblems(env as Env),
    );
  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze(toConfig(env as Env));
}

function toConfig(env: Env): Config {
  // One setting for every group-committed write (interaction logs, ping samples); each gets its own queue.
  const groupCommit = {
    maxBatch: env.GROUP_COMMIT_MAX_BATCH,
    lingerMs: env.GROUP_COMMIT_LINGER_MS,
    maxQueue: env.GROUP_COMMIT_MAX_QUEUE,
  };
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
          queryTimeoutMs: env.DATABASE_QUERY_TIMEOUT_MS,
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
      refreshGraceSeconds: env.TOKEN_REFRESH_GRACE_SECONDS,
      recordsKept: { max: env.TOKEN_CACHE_MAX_ENTRIES, forMs: env.TOKEN_CACHE_SECONDS * 1000 },
      rateLimitPerMinute: env.RATE_LIMIT_AUTH_PER_MINUTE,
    },
    workBudget: {
      units: env.WORK_BUDGET_UNITS,
      windowSeconds: env.WORK_BUDGET_WINDOW_SECONDS,
      refusalDelayMs: env.WORK_BUDGET_REFUSAL_DELAY_MS,
      maxInFlight: env.WORK_BUDGET_MAX_IN_FLIGHT,
      refreshMs: env.WORK_BUDGET_REFRESH_SECONDS * 1000,
    },
    ownerUsage: {
      retentionDays: env.USAGE_RETENTION_DAYS,
      retentionJobEveryMs: env.RETENTION_JOB_INTERVAL_SECONDS * 1000,
    },
    interactions: {
      retentionDays: env.INTERACTION_LOG_RETENTION_DAYS,
      retentionJobEveryMs: env.RETENTION_JOB_INTERVAL_SECONDS * 1000,
      groupCommit,
    },
    history: {
      retentionDays: env.HISTORY_RETENTION_DAYS,
      retentionJobEveryMs: env.RETENTION_JOB_INTERVAL_SECONDS * 1000,
    },
    ping: {
      retentionDays: env.PING_RETENTION_DAYS,
      retentionJobEveryMs: env.RETENTION_JOB_INTERVAL_SECONDS * 1000,
      historyPerDay: env.PING_HISTORY_PER_DAY,
      // The history kept in memory: half the players' days, half the answers made of them.
      keptDaysMaxBytes: Math.floor(env.PING_HISTORY_CACHE_MAX_BYTES / 2),
      answersMaxBytes: Math.floor(env.PING_HISTORY_CACHE_MAX_BYTES / 2),
      maxQueuedSamples: env.PING_MAX_QUEUED_SAMPLES,
      maxFutureMs: env.PING_MAX_FUTURE_SECONDS * 1000,
      bodyLimitBytes: env.PING_BODY_LIMIT_BYTES,
      groupCommit,
    },
    messengerUsers: { maxLinkedAccounts: env.MESSENGER_MAX_LINKED_ACCOUNTS },
    applications: {
      maxPendingPerOwner: env.APPLICATIONS_MAX_PENDING_PER_OWNER,
      rateLimitPerMinute: env.RATE_LIMIT_AUTH_PER_MINUTE,
    },
    portal: {
      discord:
        env.DISCORD_CLIENT_ID && env.DISCORD_CLIENT_SECRET && env.DISCORD_REDIRECT_URI
          ? {
              clientId: env.DISCORD_CLIENT_ID,
              clientSecret: env.DISCORD_CLIENT_SECRET,
              redirectUri: env.DISCORD_REDIRECT_URI,
              apiUrl: env.DISCORD_API_URL.replace(/\/+$/, ''),
              timeoutMs: env.UPSTREAM_TIMEOUT_MS,
            }
          : undefined,
      sessionTtlSeconds: env.PORTAL_SESSION_TTL_SECONDS,
      reviewers: (env.PORTAL_REVIEWERS ?? '')
        .split(',')
        .map((id) => id.trim())
        .filter(Boolean)
        .map((id) => BigInt(id)),
      secureCookies: env.NODE_ENV === 'production',
      rateLimitPerMinute: env.RATE_LIMIT_AUTH_PER_MINUTE,
      retentionJobEveryMs: env.RETENTION_JOB_INTERVAL_SECONDS * 1000,
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
      deadlineMs: env.UPSTREAM_DEADLINE_MS,
      retries: env.UPSTREAM_RETRIES,
      retryBaseMs: env.UPSTREAM_RETRY_BASE_MS,
      breakerFailures: env.UPSTREAM_BREAKER_FAILURES,
      breakerCooldownMs: env.UPSTREAM_BREAKER_COOLDOWN_MS,
      connections: env.UPSTREAM_CONNECTIONS,
      maxBodyBytes: env.UPSTREAM_MAX_BODY_BYTES,
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
      staleDeadlineMs: env.CACHE_STALE_DEADLINE_MS,
    },
  };
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
