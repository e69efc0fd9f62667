import { setTimeout as sleep } from 'node:timers/promises';
import { type ContentEncoding, compress, compressSmallest, REFINABLE_ENCODINGS } from '../compression.js';
import { type Cache, type CacheEntry, ownBytes } from './cache.js';
import type { CacheMetrics, RefineOutcome } from './cache-metrics.js';
import type { FetchLocks } from './fetch-locks.js';
import type { Refiner } from './refiner.js';
import type { SingleFlight } from './single-flight.js';

export type CacheStatus = 'HIT' | 'MISS' | 'STALE';

/** Where a served value came from, and how long it is fresh by its resource's rules. */
export interface Freshness {
  readonly status: CacheStatus;
  /** Epoch milliseconds when the upstream gave it. */
  readonly storedAt: number;
  readonly freshMs: number;
}

export interface Served {
  /** The value's bytes (empty: known not to exist). A hit hands out the cached bytes themselves. */
  readonly bytes: Buffer;
  readonly freshness: Freshness;
  /**
   * The bytes compressed in `encoding`: compressed once per entry and encoding (in zlib's thread pool, by
   * the first request that asks; concurrent askers share it), then kept in process beside the entry. A
   * Brotli copy is made again at Brotli's smallest in the background (the refiner) and replaced by it.
   */
  encoded(encoding: ContentEncoding): Promise<Buffer>;
}

export interface ResourceRules {
  /** Label of this resource in metrics and the prefix of its keys; unique per app. */
  readonly name: string;
  /** How long an entry is fresh (found and not-found values may differ). */
  freshMs(entry: CacheEntry): number;
  /** How long past freshness an entry may stand in when the fetch fails. */
  readonly staleIfErrorMs: number;
}

/** What the cache needs to know of the errors its fetches throw; the layer that defines them supplies it. */
export interface FailureRules {
  /** Whether a stale copy may stand in when a fetch throws this (an upstream failure), or it must propagate. */
  canServeStale(error: unknown): boolean;
  /**
   * Whether the error is the fetching caller's own (their quota), not the resource's: the callers that
   * joined that fetch run their own instead of sharing it. Such an error is not encoded either.
   */
  isCallersOwn(error: unknown): boolean;
  /** The error as bytes another instance can rebuild it from; undefined for an error not to share. */
  encode(error: unknown): Buffer | undefined;
  decode(bytes: Buffer): Error;
  /** The error for a wait on another instance's fetch that outlived the lock. */
  waitTimedOut(): Error;
}

export interface CachedResourceDeps {
  readonly cache: Cache;
  /**
   * An in-process tier in front of a shared cache: entries read from (or written to) the shared cache are
   * kept here for the rest of their freshness, so a hit does not cross the network. Never a stale copy.
   */
  readonly near?: Cache;
  /** Where compressed copies of entries are kept: the in-process cache, whose bound counts them too. */
  readonly variants: Cache;
  /** Makes kept compressed copies smaller in the background; without one they stay as first made. */
  readonly refiner?: Refiner;
  readonly flights: SingleFlight;
  /** Present when the cache is shared by several instances: a fetch then runs under a lock in it. */
  readonly locks?: FetchLocks;
  /** How long a cross-instance lock lives if its holder dies. */
  readonly lockMs: number;
  /**
   * How long a reader holding a stale copy waits for the refresh: then the copy is served (STALE) and the
   * refresh goes on for the next readers. Undefined: the reader waits for the refresh.
   */
  readonly staleDeadlineMs?: number;
  readonly failures: FailureRules;
  readonly metrics: CacheMetrics;
  readonly now?: () => number;
}

export interface CachedResource {
  /**
   * The value of `key`: fresh from the cache (HIT), or fetched once for any number of concurrent callers
   * and cached (MISS). When the fetch fails with an error the failure rules let stand in for, a copy still
   * within stale-if-error (from the cache, else from `lastKnown`) is served (STALE); otherwise it throws.
   */
  get(
    key: string,
    fetch: () => Promise<Buffer>,
    lastKnown?: () => Promise<CacheEntry | undefined>,
  ): Promise<Served>;
}

/** How often a waiting instance looks whether the lock holder's answer has landed. */
const POLL_MS = 15;

export function createCachedResource(deps: CachedResourceDeps, rules: ResourceRules): CachedResource {
  const { cache, near, variants, flights, locks, failures, metrics } = deps;
  const now = deps.now ?? Date.now;

  /** How long a compressed copy of `entry` is kept: as long as the entry may be served. */
  const variantKeepMs = (entry: CacheEntry) =>
    entry.storedAt + rules.freshMs(entry) + rules.staleIfErrorMs - now();

  /** The entry's bytes in `encoding`: a copy kept from an earlier answer, or compressed now (once). */
  async function encodedOf(key: string, entry: CacheEntry, encoding: ContentEncoding): Promise<Buffer> {
    const variantKey = `${key}\u0000${encoding}`;
    const kept = await variants.get(variantKey);
    if (kept?.storedAt === entry.storedAt) return kept.bytes;
    const { value } = await flights.run(`${variantKey}\u0000${entry.storedAt}`, async () => {
      const bytes = ownBytes(await compress(entry.bytes, encoding));
      const keepForMs = variantKeepMs(entry);
      if (keepForMs > 0) {
        await variants.set(variantKey, { bytes, storedAt: entry.storedAt }, keepForMs);
        if (REFINABLE_ENCODINGS.has(encoding)) queueRefinement(key, entry.storedAt, encoding);
      }
      return bytes;
    });
    return value;
  }

  /** The refinements queued and not yet over, by copy and entry: a copy made again is not queued twice. */
  const refining = new Set<string>();

  /**
   * Queues the making of a smaller copy of the entry of `key` stored at `storedAt`. The job holds the
   * entry's key, not its bytes: what waits in the queue costs no memory the cache's bound does not count.
   */
  function queueRefinement(key: string, storedAt: number, encoding: ContentEncoding): void {
    const { refiner } = deps;
    const job = `${key}\u0000${encoding}\u0000${storedAt}`;
    if (!refiner || refining.has(job)) return;
    const taken = refiner.submit(async () => {
      try {
        metrics.refined(rules.name, await refine(key, storedAt, encoding));
      } finally {
        refining.delete(job);
      }
    });
    if (taken) refining.add(job);
    else metrics.refined(rules.name, 'dropped');
  }

  /** The entry of `key` stored at `storedAt`, if the cache still has it. */
  async function entryStoredAt(key: string, storedAt: number): Promise<CacheEntry | undefined> {
    const entry = (near && (await near.get(key))) || (await cache.get(key));
    return entry?.storedAt === storedAt ? entry : undefined;
  }

  /**
   * Replaces the kept copy in `encoding` of the entry of `key` stored at `storedAt` by the smallest the
   * coding makes, unless the entry changed or it or its copy left the cache meanwhile ('gone': then there is
   * nothing to improve, and nothing is compressed for it).
   */
  async function refine(key: string, storedAt: number, encoding: ContentEncoding): Promise<RefineOutcome> {
    const variantKey = `${key}\u0000${encoding}`;
    const copyKept = async () => {
      const kept = await variants.get(variantKey);
      return kept?.storedAt === storedAt ? kept : undefined;
    };
    const entry = (await copyKept()) && (await entryStoredAt(key, storedAt));
    if (!entry) return 'gone';
    const smaller = ownBytes(await compressSmallest(entry.bytes, encoding));
    const kept = await copyKept();
    const keepForMs = variantKeepMs(entry);
    if (!kept || keepForMs <= 0) return 'gone';
    if (smaller.length >= kept.bytes.length) return 'kept';
    await variants.set(variantKey, { bytes: smaller, storedAt }, keepForMs);
    return 'smaller';
  }

  const served = (key: string, entry: CacheEntry, status: CacheStatus): Served => ({
    bytes: entry.bytes,
    freshness: { status, storedAt: entry.storedAt, freshMs: rules.freshMs(entry) },
    encoded: (encoding) => encodedOf(key, entry, encoding),
  });
  const isFresh = (entry: CacheEntry) => now() - entry.storedAt < rules.freshMs(entry);
  const usable = (entry: CacheEntry | undefined) =>
    entry && now() - entry.storedAt < rules.freshMs(entry) + rules.staleIfErrorMs ? entry : undefined;

  /** Keeps a fresh entry in the in-process tier until its freshness ends (nothing when it has none). */
  const keepNear = (key: string, entry: CacheEntry) => {
    const freshFor = entry.storedAt + rules.freshMs(entry) - now();
    if (near && freshFor > 0) void near.set(key, entry, freshFor);
  };

  async function fetchAndStore(key: string, fetch: () => Promise<Buffer>): Promise<CacheEntry> {
    // Bytes of their own, as the in-process cache keeps them: the answer and the cache hold the same ones.
    const bytes = ownBytes(await fetch());
    const entry = { bytes, storedAt: now() };
    await cache.set(key, entry, rules.freshMs(entry) + rules.staleIfErrorMs);
    keepNear(key, entry);
    return entry;
  }

  /** Fetches under the shared lock, or waits for the instance holding it and takes its answer. */
  async function fetchShared(
    sharedLocks: FetchLocks,
    key: string,
    fetch: () => Promise<Buffer>,
    seen: CacheEntry | undefined,
  ): Promise<CacheEntry> {
    // Long enough for a holder that died as we arrived to lose its lock, and for us to take over then.
    const deadline = now() + 2 * deps.lockMs;
    while (now() < deadline) {
      const taken = await sharedLocks.acquire(key, deps.lockMs);
      if ('release' in taken) {
        let failure: Buffer | undefined;
        try {
          // The previous holder may have stored a fresh answer between our first look and our lock.
          const landed = await cache.get(key);
          if (landed && isNewer(landed, seen) && isFresh(landed)) {
            keepNear(key, landed);
            return landed;
          }
          return await fetchAndStore(key, fetch);
        } catch (error) {
          failure = failures.encode(error);
          throw error;
        } finally {
          await taken.release(failure);
        }
      }
      const { heldBy } = taken;
      do {
        await sleep(POLL_MS);
        const landed = await cache.get(key);
        if (landed && isNewer(landed, seen)) {
          keepNear(key, landed);
          return landed;
        }
        const failure = await sharedLocks.failureOf(key, heldBy);
        if (failure) throw failures.decode(failure);
      } while (now() < deadline && (await sharedLocks.holder(key)) === heldBy);
    }
    throw failures.waitTimedOut();
  }

  return {
    async get(key, fetch, lastKnown) {
      const fullKey = `${rules.name}:${key}`;
      const kept = await near?.get(fullKey);
      if (kept && isFresh(kept)) {
        metrics.looked(rules.name, 'hit');
        return served(fullKey, kept, 'HIT');
      }
      const cached = await cache.get(fullKey);
      if (cached && isFresh(cached)) {
        keepNear(fullKey, cached);
        metrics.looked(rules.name, 'hit');
        return served(fullKey, cached, 'HIT');
      }
      try {
        const flight = flights.run(
          fullKey,
          () => (locks ? fetchShared(locks, fullKey, fetch, cached) : fetchAndStore(fullKey, fetch)),
          (error) => !failures.isCallersOwn(error),
        );
        const copy = usable(cached);
        const landed = copy ? await withinDeadline(flight, deps.staleDeadlineMs) : await flight;
        if (!landed) {
          // The refresh is slow (a hung upstream): the reader has a copy, and gets it now.
          metrics.looked(rules.name, 'stale');
          return served(fullKey, copy as CacheEntry, 'STALE');
        }
        const { value, joined } = landed;
        if (joined) metrics.joined(rules.name);
        metrics.looked(rules.name, 'miss');
        return served(fullKey, value, 'MISS');
      } catch (error) {
        if (!failures.canServeStale(error)) throw error;
        const fallback = usable(cached) ?? usable(await lastKnown?.());
        if (!fallback) throw error;
        metrics.looked(rules.name, 'stale');
        return served(fullKey, fallback, 'STALE');
      }
    },
  };
}

/**
 * What `flight` resolves to if it settles within `ms` (its failure thrown); undefined once `ms` have passed
 * first, and the flight goes on alone (its failure then heard by nobody but its own log).
 */
async function withinDeadline<T>(flight: Promise<T>, ms: number | undefined): Promise<T | undefined> {
  if (ms === undefined) return flight;
  const timer = new AbortController();
  // Aborted once the race is over: an abandoned timer holds nothing up.
  const late = sleep(ms, undefined, { signal: timer.signal }).catch(() => undefined);
  try {
    return await Promise.race([flight, late]);
  } finally {
    timer.abort();
    flight.catch(() => undefined);
  }
}

const isNewer = (entry: CacheEntry, than: CacheEntry | undefined) =>
  entry.storedAt > (than?.storedAt ?? Number.NEGATIVE_INFINITY);
