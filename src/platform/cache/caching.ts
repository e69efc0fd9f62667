import type { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import type { Logger } from '../logger.js';
import type { Cache } from './cache.js';
import { createCacheMetrics } from './cache-metrics.js';
import {
  type CachedResource,
  createCachedResource,
  type FailureRules,
  type ResourceRules,
} from './cached-resource.js';
import { createMemoryCache } from './memory-cache.js';
import { createRedisCache } from './redis-cache.js';
import { createRedisLocks } from './redis-locks.js';
import { createRefiner } from './refiner.js';
import { createSingleFlight } from './single-flight.js';

export interface CachingSettings {
  /** Bound of the in-process cache, in bytes of cached values. */
  readonly memoryMaxBytes: number;
  /** How long a cross-instance single-flight lock lives if its holder dies. */
  readonly singleFlightLockMs: number;
  /**
   * How long a reader with a stale copy waits for its refresh before the copy is served (STALE) and the
   * refresh carries on in the background.
   */
  readonly staleDeadlineMs: number;
}

export interface Caching {
  /** A cached resource over the app's one cache; each name may be taken once. */
  resource(rules: ResourceRules): CachedResource;
  /** Stops the background work (compressed copies made smaller), waiting for the job under way. */
  close(): Promise<void>;
}

/**
 * Compressed copies are made again at their coding's smallest one at a time, in a quarter of the time at
 * most (a job of 20 ms, a typical player's Brotli copy on a quiet core, is followed by 60 ms of rest), and at most 64 wait:
 * under a flood of new entries the rest keep their first copy rather than the machine's CPU going to it.
 */
const REFINE_SHARE = 0.25;
const REFINE_MAX_QUEUED = 64;

/**
 * Entries are written in this format version's key space: an instance of another version sharing the
 * Redis never reads entry bytes it would misunderstand. (Lock keys are not versioned; see decisions.md.)
 */
const ENTRY_FORMAT = 'v2';

/**
 * The app's one cache (Redis when configured, shared by every instance with a fetch lock in it; else
 * in-process), its single-flight and its metrics, built once; modules take resources from it.
 */
export function createCaching(
  settings: CachingSettings,
  deps: {
    redis: Redis | undefined;
    keyPrefix: string;
    registry: Registry;
    failures: FailureRules;
    log: Logger;
  },
): Caching {
  const { redis, keyPrefix, log } = deps;
  // The in-process cache, bounded in bytes: the cache itself without Redis; with Redis, the tier in front
  // of it. Either way it also keeps the entries' compressed copies, which its bound counts.
  const memory = createMemoryCache(settings.memoryMaxBytes);
  const cache: Cache = redis ? createRedisCache(redis, `${keyPrefix}cache:${ENTRY_FORMAT}:`, log) : memory;
  const refiner = createRefiner({
    maxQueued: REFINE_MAX_QUEUED,
    share: REFINE_SHARE,
    onError: (error) => log.warn({ err: error }, 'could not make a compressed copy smaller'),
  });
  const shared = {
    cache,
    // With Redis, fresh entries also stay in process for the rest of their freshness.
    ...(redis ? { near: memory } : {}),
    variants: memory,
    refiner,
    flights: createSingleFlight(),
    ...(redis ? { locks: createRedisLocks(redis, `${keyPrefix}cache:`, log) } : {}),
    lockMs: settings.singleFlightLockMs,
    staleDeadlineMs: settings.staleDeadlineMs,
    failures: deps.failures,
    metrics: createCacheMetrics(deps.registry),
  };
  const names = new Set<string>();
  return {
    resource(rules) {
      if (names.has(rules.name)) throw new Error(`a cached resource named "${rules.name}" already exists`);
      names.add(rules.name);
      return createCachedResource(shared, rules);
    },
    close: () => refiner.close(),
  };
}
