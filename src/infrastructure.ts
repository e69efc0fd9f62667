import type { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import type { Config } from './config.js';
import { migrations } from './migrations.js';
import type { Probe } from './modules/health/health.service.js';
import { type Caching, createCaching } from './platform/cache/caching.js';
import { createDatabase, type Database, pingDatabase } from './platform/db/database.js';
import { pendingMigrations } from './platform/db/migrator.js';
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
  readonly upstreams: Upstreams;
  readonly log: Logger;
  /** Readiness checks: database, migrations, and Redis when configured. */
  readonly probes: Readonly<Record<string, Probe>>;
  close(): Promise<void>;
}

export async function createInfrastructure(config: Config, log: Logger): Promise<Infrastructure> {
  const db = createDatabase(config.database, { log });
  const redis = config.redisUrl
    ? await connectRedis(config.redisUrl, `player-data-service:${config.redisKeyPrefix}`, log)
    : undefined;
  const metrics = createMetricsRegistry();
  const keyPrefix = config.redisKeyPrefix;
  const upstreams = createUpstreams(config.upstream, {
    redis,
    keyPrefix,
    metrics: createUpstreamMetrics(metrics),
    log,
  });
  const caching = createCaching(config.cache, {
    redis,
    keyPrefix,
    registry: metrics,
    failures: upstreamFailureRules,
    log,
  });
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
    upstreams,
    log,
    probes,
    async close() {
      // Each part closes even if one before it fails to.
      const steps: [string, () => Promise<unknown>][] = [
        ['upstream clients', () => upstreams.close()],
        ['redis', async () => redis && (await redis.quit().catch(() => redis.disconnect()))],
        ['database', () => db.destroy()],
      ];
      for (const [part, close] of steps) {
        await close().catch((error: unknown) => log.error({ err: error, part }, 'could not close'));
      }
    },
  };
}

/** Connects to Redis without making the start wait on it: a missing Redis shows in /ready, not as a crash. */
async function connectRedis(url: string, name: string, log: Logger): Promise<Redis> {
  const redis = createRedis(url, name);
  redis.on('error', (error) => log.warn({ err: error }, 'redis connection error'));
  await redis.connect().catch((error: Error) => log.warn({ err: error }, 'redis is not reachable yet'));
  return redis;
}
