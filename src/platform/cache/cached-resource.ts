import { setTimeout as sleep } from 'node:timers/promises';
import { Counter, type Registry } from 'prom-client';
import { UpstreamFailure, type UpstreamFailureKind } from '../../upstream/upstream-failure.js';
import type { Cache, CacheEntry } from './cache.js';
import type { SingleFlight } from './single-flight.js';

export type CacheStatus = 'HIT' | 'MISS' | 'STALE';

export interface Served {
  readonly entry: CacheEntry;
  readonly cacheStatus: CacheStatus;
  /** How long the entry is fresh by its resource's rules. */
  readonly freshMs: number;
}

export interface ResourceRules {
  /** Label of this resource in metrics and the prefix of its keys. */
  readonly name: string;
  /** How long an entry is fresh (found and not-found answers differ). */
  freshMs(entry: CacheEntry): number;
  /** How long past freshness an entry may stand in when the upstream fails. */
  readonly staleIfErrorMs: number;
}

export interface CachedResourceDeps {
  readonly cache: Cache;
  readonly flights: SingleFlight;
  /** The cache is shared by several instances: take a lock in it before fetching. */
  readonly shared: boolean;
  /** How long a cross-instance lock lives if its holder dies. */
  readonly lockMs: number;
  readonly metrics: CacheMetrics;
  readonly now?: () => number;
}

export interface CacheMetrics {
  looked(resource: string, result: 'hit' | 'miss' | 'stale'): void;
  joined(resource: string): void;
}

export function createCacheMetrics(registry: Registry): CacheMetrics {
  const lookups = new Counter({
    name: 'cache_lookups_total',
    help: 'Answers by where they came from: hit (fresh cache), miss (upstream), stale (old copy on upstream failure).',
    labelNames: ['resource', 'result'],
    registers: [registry],
  });
  const joins = new Counter({
    name: 'single_flight_joins_total',
    help: 'Requests that waited for an upstream call already under way instead of making their own.',
    labelNames: ['resource'],
    registers: [registry],
  });
  return {
    looked: (resource, result) => lookups.inc({ resource, result }),
    joined: (resource) => joins.inc({ resource }),
  };
}

/** How often a waiting instance looks whether the lock holder's answer has landed. */
const POLL_MS = 15;
/** How long a lock holder's failure stays readable by the instances waiting on it. */
const FAILURE_SHARED_MS = 2000;
const LOCK_ENTRY: CacheEntry = { status: 0, body: Buffer.alloc(0), storedAt: 0 };

/**
 * One cached upstream resource. A fresh entry is served as is (HIT). Otherwise one fetch runs for any
 * number of concurrent requests (single-flight; across instances through a lock in the shared cache),
 * and its answer is cached and served (MISS). When the fetch fails, a copy still within stale-if-error
 * (from the cache, else from `lastKnown`) is served (STALE); without one the failure is thrown.
 */
export function createCachedResource(deps: CachedResourceDeps, rules: ResourceRules) {
  const { cache, flights, metrics } = deps;
  const now = deps.now ?? Date.now;
  const served = (entry: CacheEntry, cacheStatus: CacheStatus): Served => ({
    entry,
    cacheStatus,
    freshMs: rules.freshMs(entry),
  });
  const usable = (entry: CacheEntry | undefined) =>
    entry && now() - entry.storedAt < rules.freshMs(entry) + rules.staleIfErrorMs ? entry : undefined;

  async function fetchAndStore(key: string, fetch: () => Promise<CacheEntry>): Promise<CacheEntry> {
    const entry = await fetch();
    await cache.set(key, entry, rules.freshMs(entry) + rules.staleIfErrorMs);
    return entry;
  }

  /** Fetches under the shared lock, or waits for the instance holding it and takes its answer. */
  async function fetchShared(
    key: string,
    fetch: () => Promise<CacheEntry>,
    seen: CacheEntry | undefined,
  ): Promise<CacheEntry> {
    const lockKey = `lock:${key}`;
    const failureKey = `failed:${key}`;
    const startedAt = now();
    const deadline = startedAt + deps.lockMs;
    while (now() < deadline) {
      if (await cache.add(lockKey, LOCK_ENTRY, deps.lockMs)) {
        try {
          // The previous holder may have stored a fresh answer between our first look and our lock.
          const landed = await cache.get(key);
          if (landed && isNewer(landed, seen) && now() - landed.storedAt < rules.freshMs(landed))
            return landed;
          return await fetchAndStore(key, fetch);
        } catch (error) {
          if (error instanceof UpstreamFailure)
            await cache.set(failureKey, encodeFailure(error, now()), FAILURE_SHARED_MS);
          throw error;
        } finally {
          await cache.delete(lockKey);
        }
      }
      do {
        await sleep(POLL_MS);
        const landed = await cache.get(key);
        if (landed && isNewer(landed, seen)) return landed;
        const failure = await cache.get(failureKey);
        if (failure && failure.storedAt >= startedAt) throw decodeFailure(failure);
      } while (now() < deadline && (await cache.get(lockKey)));
    }
    throw new UpstreamFailure('timeout', 'the upstream answer did not arrive in time');
  }

  return {
    async get(
      key: string,
      fetch: () => Promise<CacheEntry>,
      lastKnown?: () => Promise<CacheEntry | undefined>,
    ): Promise<Served> {
      const fullKey = `${rules.name}:${key}`;
      const cached = await cache.get(fullKey);
      if (cached && now() - cached.storedAt < rules.freshMs(cached)) {
        metrics.looked(rules.name, 'hit');
        return served(cached, 'HIT');
      }
      try {
        const { value, joined } = await flights.run(fullKey, () =>
          deps.shared ? fetchShared(fullKey, fetch, cached) : fetchAndStore(fullKey, fetch),
        );
        if (joined) metrics.joined(rules.name);
        metrics.looked(rules.name, 'miss');
        return served(value, 'MISS');
      } catch (error) {
        if (!(error instanceof UpstreamFailure)) throw error;
        const fallback = usable(cached) ?? usable(await lastKnown?.());
        if (!fallback) throw error;
        metrics.looked(rules.name, 'stale');
        return served(fallback, 'STALE');
      }
    },
  };
}

const isNewer = (entry: CacheEntry, than: CacheEntry | undefined) =>
  entry.storedAt > (than?.storedAt ?? Number.NEGATIVE_INFINITY);

function encodeFailure(failure: UpstreamFailure, at: number): CacheEntry {
  const body = {
    kind: failure.kind,
    cause: failure.publicCause,
    retryAfterSeconds: failure.retryAfterSeconds,
  };
  return { status: 0, body: Buffer.from(JSON.stringify(body)), storedAt: at };
}

function decodeFailure(entry: CacheEntry): UpstreamFailure {
  const { kind, cause, retryAfterSeconds } = JSON.parse(entry.body.toString('utf8')) as {
    kind: UpstreamFailureKind;
    cause: string;
    retryAfterSeconds?: number;
  };
  return new UpstreamFailure(kind, cause, retryAfterSeconds);
}
