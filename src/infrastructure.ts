import type { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import type { Config } from './config.js';
import { migrations } from './migrations.js';
import type { Probe } from './modules/health/health.service.js';
import { type Caching, createCaching } from './platform/cache/caching.js';
import {
  createLocalInvalidationFeed,
  createRedisInvalidationFeed,
  type InvalidationFeed,
} from './platform/cache/invalidation.js';
import { createDatabase, type Database, externalWritesProbe, pingDatabase } from './platform/db/database.js';
import { pendingMigrations } from './platform/db/migrator.js';
import { type Buckets, createMemoryBuckets } from './platform/limits/buckets.js';
import { createRedisBuckets } from './platform/limits/buckets-redis.js';
import { createUsageMeter, type UsageMeter } from './platform/limits/usage-meter.js';
import type { Logger } from './platform/logger.js';
import { createMetricsRegistry } from './platform/metrics.js';
import { createRedis, pingRedis } from './platform/redis.js';
import { upstreamFailureRules } from './upstream/upstream-failure.js';
import { createUpstreamMetrics } from './upstream/upstream-metrics.js';
import { createUpstreams, type Upstreams } from './upstream/upstreams.js';

/**
 * The parts every module shares, built once per app: one database, one Redis connection, one metrics
 * registry, one cache with its single-flight, and one set of upstream clients (so one budget per key).
 * Modules receive what they need of these; none of them builds its own.
 */
export interface Infrastructure {
  readonly db: Database;
  readonly redis: Redis | undefined;
  readonly metrics: Registry;
  readonly caching: Caching;
  /**
   * How instances tell each other of revoked tokens, so that each may keep token records in process:
   * Redis pub/sub when configured, otherwise the process itself (on SQLite it also notices another
   * process's writes). Without Redis on PostgreSQL, another instance's revocation is heard through the
   * database's change mark, read every second (tokens.service.ts).
   */
  readonly tokenRevocations: InvalidationFeed;
  readonly upstreams: Upstreams;
  /** The rate limits' token buckets: in Redis when configured (one per owner or address for all instances). */
  readonly buckets: Buckets;
  /** Each owner's usage per day, counted in process (the owner-usage module stores it). */
  readonly usage: UsageMeter;
  readonly log: Logger;
  /** Readiness checks: database, migrations, and Redis when configured. */
  readonly probes: Readonly<Record<string, Probe>>;
  close(): Promise<void>;
}

/** The Redis channel (after the key prefix) on which instances hear of revoked tokens. */
export const TOKEN_REVOCATIONS_CHANNEL = 'invalidate:tokens';

export async function createInfrastructure(config: Config, log: Logger): Promise<Infrastructure> {
  const db = createDatabase(config.database, { log });
  const redis = config.redisUrl
    ? await connectRedis(config.redisUrl, `player-data-service:${config.redisKeyPrefix}`, log)
    : undefined;
  const metrics = createMetricsRegistry();
  const keyPrefix = config.redisKeyPrefix;
  const usage = createUsageMeter();
  const upstreams = createUpstreams(config.upstream, {
    redis,
    keyPrefix,
    metrics: createUpstreamMetrics(metrics),
    log,
    onOwnerCall: (owner) => usage.count(owner, 'upstream'),
  });
  const caching = createCaching(config.cache, {
    redis,
    keyPrefix,
    registry: metrics,
    failures: upstreamFailureRules,
    log,
  });
  const tokenRevocations = redis
    ? createRedisInvalidationFeed(redis, keyPrefix + TOKEN_REVOCATIONS_CHANNEL, log)
    : createLocalInvalidationFeed(externalWritesProbe(db));
  const buckets = redis ? createRedisBuckets(redis, `${keyPrefix}limits:`, log) : createMemoryBuckets();
  const probes: Record<string, Probe> = {
    database: () => pingDatabase(db),
    migrations: async () => {
      const pending = await pendingMigrations(db, migrations);
      if (pending.length > 0) throw new Error(`not applied: ${pending.join(', ')}`);
    },
  };
  if (redis) probes.redis = () => pingRedis(redis);
  return {
    db,
    redis,
    metrics,
    caching,
    tokenRevocations,
    upstreams,
    buckets,
    usage,
    log,
    probes,
    async close() {
      // Each part closes even if one before it fails to.
      const steps: [string, () => Promise<unknown>][] = [
        ['upstream clients', () => upstreams.close()],
        ['cache refinements', () => caching.close()],
        ['token revocations', () => tokenRevocations.close()],
        ['redis', async () => redis && (await redis.quit().catch(() => redis.disconnect()))],
        ['database', () => db.destroy()],
      ];
      for (const [part, close] of steps) {
        await close().catch((error: unknown) => log.error({ err: error, part }, 'could not close'));
      }
    },
  };
}

/** How long the start waits for Redis to answer: as long as any Redis command may take (platform/redis.ts). */
const REDIS_START_WAIT_MS = 1000;

/** Connects to Redis without making the start wait on it: a missing Redis shows in /ready, not as a crash. */
async function connectRedis(url: string, name: string, log: Logger): Promise<Redis> {
  const redis = createRedis(url, {
    connectionName: name,
    onSilent: () =>
      log.warn('redis stopped answering: connecting again; meanwhile every Redis command fails at once'),
  });
  redis.on('error', (error) => log.warn({ err: error }, 'redis connection error'));
  log.info({ waitMs: REDIS_START_WAIT_MS }, 'connecting to redis');
  const connected = redis
    .connect()
    .catch((error: Error) => log.warn({ err: error }, 'redis is not reachable yet'));
  // A Redis that takes the connection and never answers would hold the start for seconds (its first
  // commands time out, then ioredis reconnects): the start waits a command's timeout at most, and ioredis
  // goes on connecting in the background meanwhile.
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      log.warn(
        { waitedMs: REDIS_START_WAIT_MS },
        'redis did not answer in time; starting without it for now',
      );
      resolve();
    }, REDIS_START_WAIT_MS);
  });
  await Promise.race([connected, late]);
  clearTimeout(timer);
  return redis;
}
