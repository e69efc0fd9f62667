import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import type { CacheConfig } from '../../config.js';
import { createCachedResource, createCacheMetrics, type ResourceRules } from './cached-resource.js';
import { createMemoryCache } from './memory-cache.js';
import { createRedisCache } from './redis-cache.js';
import { createSingleFlight } from './single-flight.js';

/** The cache the app uses (Redis when configured, else in-process) and a factory of cached resources over it. */
export function createCaching(
  config: CacheConfig,
  {
    redis,
    keyPrefix,
    registry,
    log,
  }: { redis: Redis | undefined; keyPrefix: string; registry: Registry; log: FastifyBaseLogger },
) {
  const deps = {
    cache: redis
      ? createRedisCache(redis, `${keyPrefix}cache:`, log)
      : createMemoryCache(config.memoryMaxBytes),
    flights: createSingleFlight(),
    shared: redis !== undefined,
    lockMs: config.singleFlightLockMs,
    metrics: createCacheMetrics(registry),
  };
  return { resource: (rules: ResourceRules) => createCachedResource(deps, rules) };
}
