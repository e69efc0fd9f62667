import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { brotliCompressSync, brotliDecompressSync, constants, gunzipSync } from 'node:zlib';
import Fastify from 'fastify';
import { Registry } from 'prom-client';
import type { Cache } from '../../../src/platform/cache/cache.js';
import type { CacheMetrics } from '../../../src/platform/cache/cache-metrics.js';
import {
  type CachedResource,
  createCachedResource,
  type FailureRules,
} from '../../../src/platform/cache/cached-resource.js';
import { createCaching } from '../../../src/platform/cache/caching.js';
import type { FetchLocks } from '../../../src/platform/cache/fetch-locks.js';
import { createMemoryCache } from '../../../src/platform/cache/memory-cache.js';
import { createRefiner, type Refiner } from '../../../src/platform/cache/refiner.js';
import { createSingleFlight } from '../../../src/platform/cache/single-flight.js';
import { createMemoryLocks } from '../../helpers/memory-locks.js';

const FRESH_MS = 1000;
const STALE_IF_ERROR_MS = 5000;
const LOCK_MS = 2000;

/** An error a stale copy may stand in for, shared between instances as its message. */
class Outage extends Error {}
/** An error that is the fetching caller's own (their quota): those who joined its fetch fetch for themselves. */
class OwnLimit extends Outage {}
const failures: FailureRules = {
  canServeStale: (error) => error instanceof Outage,
  isCallersOwn: (error) => error instanceof OwnLimit,
  encode: (error) =>
    error instanceof Outage && !(error instanceof OwnLimit) ? Buffer.from(error.message) : undefined,
  decode: (bytes) => new Outage(bytes.toString()),
  waitTimedOut: () => new Outage('timed out'),
};

/** A refiner's job must not fail in these tests. */
const failOnError = (error: unknown) => assert.fail(String(error));

function countingMetrics() {
  const counts: Record<string, number> = {};
  const metrics: CacheMetrics = {
    looked: (resource, result) => {
      counts[`${resource}:${result}`] = (counts[`${resource}:${result}`] ?? 0) + 1;
    },
    joined: (resource) => {
      counts[`${resource}:joined`] = (counts[`${resource}:joined`] ?? 0) + 1;
    },
    refined: (resource, outcome) => {
      counts[`${resource}:refined:${outcome}`] = (counts[`${resource}:refined:${outcome}`] ?? 0) + 1;
    },
  };
  return { metrics, counts };
}

/** A resource on a fake clock; with `shared`, an instance among others using the same cache and locks. */
function setup(shared?: { cache: Cache; locks: FetchLocks; clock: { now: number } }, refiner?: Refiner) {
  const clock = shared?.clock ?? { now: 1_000_000 };
  const cache = shared?.cache ?? createMemoryCache(1024 * 1024);
  const { metrics, counts } = countingMetrics();
  const resource: CachedResource = createCachedResource(
    {
      cache,
      variants: createMemoryCache(1024 * 1024),
      ...(refiner ? { refiner } : {}),
      flights: createSingleFlight(),
      ...(shared ? { locks: shared.locks } : {}),
      lockMs: LOCK_MS,
      failures,
      metrics,
      now: () => clock.now,
    },
    { name: 'thing', freshMs: () => FRESH_MS, staleIfErrorMs: STALE_IF_ERROR_MS },
  );
  return { resource, cache, clock, counts };
}

const bytes = (text: string) => Buffer.from(text);

describe('cached resource', () => {
  it('fetches on a miss, then serves the same bytes while fresh without fetching', async () => {
    const { resource, clock, counts } = setup();
    let fetches = 0;
    const fetch = async () => bytes(`v${++fetches}`);
    const first = await resource.get('k', fetch);
    assert.equal(first.freshness.status, 'MISS');
    assert.equal(first.freshness.storedAt, clock.now);
    assert.equal(first.freshness.freshMs, FRESH_MS);
    clock.now += FRESH_MS - 1;
    const second = await resource.get('k', fetch);
    assert.equal(second.freshness.status, 'HIT');
    assert.equal(second.bytes, first.bytes, 'a hit hands out the cached bytes themselves');
    assert.equal(fetches, 1);
    clock.now += 1;
    assert.equal((await resource.get('k', fetch)).bytes.toString(), 'v2', 'no longer fresh: fetched again');
    assert.deepEqual(counts, { 'thing:miss': 2, 'thing:hit': 1 });
  });

  it('makes one fetch for concurrent callers of one key, and one per key', async () => {
    const { resource, counts } = setup();
    let fetches = 0;
    const fetch = async () => {
      fetches += 1;
      await sleep(10);
      return bytes('v');
    };
    const served = await Promise.all([
      ...Array.from({ length: 50 }, () => resource.get('a', fetch)),
      resource.get('b', fetch),
    ]);
    assert.equal(fetches, 2);
    assert.ok(served.every((one) => one.freshness.status === 'MISS'));
    assert.equal(counts['thing:joined'], 49);
  });

  it("does not pass the leader's own failure to those who joined its fetch: they fetch for themselves", async () => {
    const { resource } = setup();
    let fetches = 0;
    /** Caller `who`'s fetch: the first caller is over their own limit. */
    const fetchFor = (who: number) => async () => {
      fetches += 1;
      await sleep(10);
      if (who === 0) throw new OwnLimit('caller 0 is over its limit');
      return bytes(`fetched for ${who}`);
    };
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, (_, who) => resource.get('k', fetchFor(who))),
    );
    assert.equal(results[0]?.status, 'rejected', 'the leader gets its own failure');
    const others = results.slice(1);
    assert.ok(others.every((result) => result.status === 'fulfilled'));
    assert.equal(fetches, 2, 'one more fetch, led by one of the joiners and joined by the rest');
  });

  it('serves a stale copy within stale-if-error when the fetch fails, and throws beyond it', async () => {
    const { resource, clock, counts } = setup();
    await resource.get('k', async () => bytes('old'));
    clock.now += FRESH_MS + STALE_IF_ERROR_MS - 1;
    const stale = await resource.get('k', async () => {
      throw new Outage('down');
    });
    assert.equal(stale.freshness.status, 'STALE');
    assert.equal(stale.bytes.toString(), 'old');
    assert.equal(counts['thing:stale'], 1);
    clock.now += 1;
    await assert.rejects(
      resource.get('k', async () => {
        throw new Outage('down');
      }),
      /down/,
    );
  });

  it('lets an error the rules do not cover through, even with a copy at hand', async () => {
    const { resource, clock } = setup();
    await resource.get('k', async () => bytes('old'));
    clock.now += FRESH_MS;
    await assert.rejects(
      resource.get('k', async () => {
        throw new TypeError('a bug');
      }),
      TypeError,
    );
  });

  it('falls back on the last known copy when the cache has none, within stale-if-error', async () => {
    const { resource, clock } = setup();
    const failing = async (): Promise<Buffer> => {
      throw new Outage('down');
    };
    const recent = async () => ({ bytes: bytes('kept'), storedAt: clock.now - FRESH_MS });
    const stale = await resource.get('k', failing, recent);
    assert.equal(stale.freshness.status, 'STALE');
    assert.equal(stale.bytes.toString(), 'kept');
    const tooOld = async () => ({ bytes: bytes('kept'), storedAt: clock.now - FRESH_MS - STALE_IF_ERROR_MS });
    await assert.rejects(resource.get('j', failing, tooOld), /down/);
  });

  describe('across instances sharing a cache and its locks', () => {
    /**
     * One cache and its locks for several instances, on one clock. The cache counts its reads (so a test
     * can wait for a waiter to have looked a few times) and can be told to miss the next reads (what an
     * instance saw before another's answer landed).
     */
    const sharedParts = () => {
      const clock = { now: 1_000_000 };
      const inner = createMemoryCache(1024 * 1024);
      let reads = 0;
      let missing = 0;
      const readers: { atLeast: number; wake: () => void }[] = [];
      const cache: Cache = {
        async get(key) {
          reads += 1;
          for (const reader of readers.filter((candidate) => reads >= candidate.atLeast)) reader.wake();
          if (missing > 0) {
            missing -= 1;
            return undefined;
          }
          return inner.get(key);
        },
        set: (key, entry, keepForMs) => inner.set(key, entry, keepForMs),
      };
      return {
        cache,
        locks: createMemoryLocks(() => clock.now),
        clock,
        missNextReads: (count: number) => {
          missing = count;
        },
        /** Resolves once the cache has been read `count` more times. */
        read: (count: number) => new Promise<void>((wake) => readers.push({ atLeast: reads + count, wake })),
      };
    };
    const held = async (locks: FetchLocks, key: string, ttlMs: number) => {
      const taken = await locks.acquire(key, ttlMs);
      assert.ok('release' in taken, 'the lock was free');
      return taken;
    };

    it('makes one fetch for concurrent callers on two instances; the other takes the answer that landed', async () => {
      const parts = sharedParts();
      const [one, two] = [setup(parts), setup(parts)];
      let fetches = 0;
      const fetch = async () => {
        fetches += 1;
        await sleep(40);
        return bytes('v');
      };
      const served = await Promise.all([
        ...Array.from({ length: 10 }, () => one.resource.get('k', fetch)),
        ...Array.from({ length: 10 }, () => two.resource.get('k', fetch)),
      ]);
      assert.equal(fetches, 1);
      assert.ok(served.every((answer) => answer.bytes.toString() === 'v'));
      assert.equal((await two.resource.get('k', fetch)).freshness.status, 'HIT');
    });

    it("shares the holder's failure with the instances that waited on it, instead of fetching again", async () => {
      const parts = sharedParts();
      const [one, two] = [setup(parts), setup(parts)];
      let fetches = 0;
      const failing = async (): Promise<Buffer> => {
        fetches += 1;
        await sleep(40);
        throw new Outage('upstream says no');
      };
      const results = await Promise.allSettled([
        one.resource.get('k', failing),
        two.resource.get('k', failing),
      ]);
      assert.equal(fetches, 1);
      for (const result of results) {
        assert.equal(result.status, 'rejected');
        assert.ok(result.status === 'rejected' && result.reason instanceof Outage);
        assert.equal(result.status === 'rejected' && result.reason.message, 'upstream says no');
      }
    });

    it("does not share the holder's own failure: the instance that waited fetches for itself", async () => {
      const parts = sharedParts();
      const [one, two] = [setup(parts), setup(parts)];
      let fetches = 0;
      const fetchFor = (who: string) => async () => {
        fetches += 1;
        await sleep(40);
        if (who === 'one') throw new OwnLimit('one is over its limit');
        return bytes(`fetched for ${who}`);
      };
      const [first, second] = await Promise.allSettled([
        one.resource.get('k', fetchFor('one')),
        sleep(5).then(() => two.resource.get('k', fetchFor('two'))),
      ]);
      assert.equal(first?.status, 'rejected');
      assert.equal(second?.status === 'fulfilled' && second.value.bytes.toString(), 'fetched for two');
      assert.equal(fetches, 2);
    });

    it('takes over when the holder vanishes without an answer (its lock lapses)', async () => {
      const parts = sharedParts();
      const two = setup(parts);
      // An instance that took the lock and died.
      await held(parts.locks, 'thing:k', LOCK_MS);
      parts.clock.now += 1;
      let fetched = false;
      const waiting = two.resource.get('k', async () => {
        fetched = true;
        return bytes('mine');
      });
      await parts.read(4);
      assert.equal(fetched, false, 'looks for the answer while the lock is held, without fetching');
      parts.clock.now += LOCK_MS;
      const served = await waiting;
      assert.equal(fetched, true);
      assert.equal(served.bytes.toString(), 'mine');
    });

    it('gives up waiting on a holder that keeps its lock beyond twice the lock time', async () => {
      const parts = sharedParts();
      const two = setup(parts);
      await held(parts.locks, 'thing:k', 100 * LOCK_MS);
      const waiting = two.resource.get('k', async () => bytes('never'));
      await parts.read(3);
      parts.clock.now += 2 * LOCK_MS;
      await assert.rejects(
        waiting,
        (error: unknown) => error instanceof Outage && error.message === 'timed out',
      );
    });

    it('re-reads the cache after taking the lock: an answer that landed meanwhile is not fetched again', async () => {
      const parts = sharedParts();
      const one = setup(parts);
      await parts.cache.set('thing:k', { bytes: bytes('landed'), storedAt: parts.clock.now }, 10_000);
      // The first look finds nothing (the answer landed just after it); the look under the lock finds it.
      parts.missNextReads(1);
      let fetched = false;
      const served = await one.resource.get('k', async () => {
        fetched = true;
        return bytes('again');
      });
      assert.equal(served.freshness.status, 'MISS');
      assert.equal(served.bytes.toString(), 'landed');
      assert.equal(fetched, false);
    });
  });

  it('compresses an entry once per encoding, for every caller at once, and never serves an older copy', async () => {
    const { resource, clock } = setup();
    const text = JSON.stringify({ player: 'x'.repeat(5000), n: 1 });
    const first = await resource.get('k', async () => bytes(text));
    const [br, again, gzip] = await Promise.all([
      first.encoded('br'),
      first.encoded('br'),
      first.encoded('gzip'),
    ]);
    assert.equal(brotliDecompressSync(br).toString(), text);
    assert.equal(gunzipSync(gzip).toString(), text);
    assert.equal(again, br, 'concurrent askers share one compression');
    assert.ok(br.length < text.length / 10);
    const hit = await resource.get('k', async () => assert.fail('fresh'));
    assert.equal(await hit.encoded('br'), br, 'kept beside the entry');
    clock.now += FRESH_MS;
    const renewed = await resource.get('k', async () => bytes(text.replace('"n":1', '"n":2')));
    assert.equal(renewed.freshness.status, 'MISS');
    assert.match(brotliDecompressSync(await renewed.encoded('br')).toString(), /"n":2/);
  });

  describe('compressed copies made smaller in the background', () => {
    /** The typical player as the service keeps it (compact JSON, 46 KB). */
    const player = JSON.stringify(
      JSON.parse(readFileSync('test/fixtures/hypixel/player.json', 'utf8')) as unknown,
    );
    const brotliAt = (quality: number) =>
      brotliCompressSync(Buffer.from(player), {
        params: {
          [constants.BROTLI_PARAM_QUALITY]: quality,
          [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        },
      }).length;

    /** A refiner that runs nothing until the test says so. */
    function heldRefiner(accept = true) {
      const jobs: (() => Promise<void>)[] = [];
      const refiner: Refiner = {
        submit: (job) => accept && jobs.push(job) > 0,
        close: async () => undefined,
      };
      return { refiner, jobs };
    }

    it('replaces a Brotli copy by one within 1.1 times the smallest Brotli makes; gzip copies stay', async () => {
      const refiner = createRefiner({ maxQueued: 4, share: 1, onError: failOnError });
      const { resource, counts } = setup(undefined, refiner);
      const first = await resource.get('k', async () => bytes(player));
      const quick = await first.encoded('br');
      const gzip = await first.encoded('gzip');
      await refiner.close(); // waits for the job under way: the Brotli copy's
      assert.equal(counts['thing:refined:smaller'], 1);
      assert.equal(
        Object.keys(counts).filter((key) => key.includes(':refined:')).length,
        1,
        JSON.stringify(counts),
      );

      const hit = await resource.get('k', async () => assert.fail('fresh'));
      const kept = await hit.encoded('br');
      assert.equal(brotliDecompressSync(kept).toString(), player);
      const smallest = Math.min(brotliAt(10), brotliAt(11));
      assert.ok(kept.length < quick.length, `${kept.length} < ${quick.length}`);
      assert.ok(quick.length > smallest * 1.1, `the first copy (${quick.length}) is not near ${smallest}`);
      assert.ok(kept.length <= smallest * 1.1, `${kept.length} within 1.1 x ${smallest}`);
      assert.equal(await hit.encoded('gzip'), gzip, 'the gzip copy is kept as first made');
    });

    it('leaves alone an entry that changed before its turn came, and counts what it could not take', async () => {
      const held = heldRefiner();
      const { resource, clock, counts } = setup(undefined, held.refiner);
      const first = await resource.get('k', async () => bytes(player));
      await first.encoded('br');
      assert.equal(held.jobs.length, 1);
      clock.now += FRESH_MS;
      const changed = player.replace('"uuid"', '"uuid2"');
      const renewed = await resource.get('k', async () => bytes(changed));
      const renewedCopy = await renewed.encoded('br');
      await held.jobs[0]?.();
      assert.equal(counts['thing:refined:gone'], 1);
      assert.equal(await renewed.encoded('br'), renewedCopy, 'the new entry keeps its own copy');
      assert.equal(brotliDecompressSync(renewedCopy).toString(), changed);

      const full = heldRefiner(false);
      const refused = setup(undefined, full.refiner);
      await (await refused.resource.get('k', async () => bytes(player))).encoded('br');
      assert.equal(refused.counts['thing:refined:dropped'], 1);
    });
  });

  it('counts compressed copies against the in-process bound: keeping one can push out an entry', async () => {
    // One bound for entries and their copies; random bytes do not compress, so a copy is as big as its entry.
    // Room for two entries of 2 KB with their keys and bookkeeping (640 bytes each), not for a third.
    const memory = createMemoryCache(6000);
    const clock = { now: 1_000_000 };
    const resource = createCachedResource(
      {
        cache: memory,
        variants: memory,
        flights: createSingleFlight(),
        lockMs: LOCK_MS,
        failures,
        metrics: countingMetrics().metrics,
        now: () => clock.now,
      },
      { name: 'thing', freshMs: () => FRESH_MS, staleIfErrorMs: STALE_IF_ERROR_MS },
    );
    const random = () => randomBytes(2000);
    let fetches = 0;
    const fetch = async () => {
      fetches++;
      return random();
    };
    const a = await resource.get('a', fetch);
    await resource.get('b', fetch);
    assert.equal((await resource.get('a', fetch)).freshness.status, 'HIT', 'two entries fit');
    await a.encoded('gzip');
    // The copy of a (2 KB and more) pushed b, the least recently used, out: b is fetched again.
    assert.equal((await resource.get('b', fetch)).freshness.status, 'MISS');
    assert.equal(fetches, 3);
  });

  describe('with an in-process tier in front of a shared cache', () => {
    /** An instance whose shared cache counts its reads, with a near tier; `shared` as another sees it. */
    function nearSetup() {
      const clock = { now: 1_000_000 };
      const shared = createMemoryCache(1024 * 1024);
      let sharedReads = 0;
      const counted: Cache = {
        get: (key) => {
          sharedReads++;
          return shared.get(key);
        },
        set: (key, entry, keepForMs) => shared.set(key, entry, keepForMs),
      };
      const { metrics, counts } = countingMetrics();
      const resource = createCachedResource(
        {
          cache: counted,
          near: createMemoryCache(1024 * 1024),
          variants: createMemoryCache(1024 * 1024),
          flights: createSingleFlight(),
          lockMs: LOCK_MS,
          failures,
          metrics,
          now: () => clock.now,
        },
        { name: 'thing', freshMs: () => FRESH_MS, staleIfErrorMs: STALE_IF_ERROR_MS },
      );
      return { resource, shared, clock, counts, sharedReads: () => sharedReads };
    }

    it('serves a fresh entry read from the shared cache from process memory for the rest of its freshness', async () => {
      const { resource, shared, clock, counts, sharedReads } = nearSetup();
      await shared.set('thing:k', { bytes: bytes('theirs'), storedAt: clock.now - 400 }, 10_000);
      const fail = async (): Promise<Buffer> => assert.fail('no fetch while fresh');
      assert.equal((await resource.get('k', fail)).bytes.toString(), 'theirs');
      assert.equal(sharedReads(), 1);
      clock.now += FRESH_MS - 400 - 1;
      for (let hit = 0; hit < 5; hit++) {
        const served = await resource.get('k', fail);
        assert.equal(served.freshness.status, 'HIT');
        assert.equal(served.freshness.storedAt, clock.now - FRESH_MS + 1, 'with its own age');
      }
      assert.equal(sharedReads(), 1, 'no read crossed to the shared cache');
      assert.equal(counts['thing:hit'], 6);
    });

    it('never serves a kept copy past its freshness: the shared cache is asked again, and a newer entry wins', async () => {
      const { resource, shared, clock, sharedReads } = nearSetup();
      await resource.get('k', async () => bytes('mine'));
      // Another instance refreshed the entry meanwhile; this one keeps serving its fresh copy until it ages.
      await shared.set('thing:k', { bytes: bytes('newer'), storedAt: clock.now + 10 }, 10_000);
      assert.equal((await resource.get('k', async () => bytes('x'))).bytes.toString(), 'mine');
      clock.now += FRESH_MS;
      const served = await resource.get('k', async () => bytes('fetched'));
      assert.equal(served.bytes.toString(), 'newer');
      assert.equal(sharedReads(), 2);
      clock.now += FRESH_MS + 10;
      // Stale everywhere, and the upstream down: the stale copy comes from the shared cache.
      const stale = await resource.get('k', async () => {
        throw new Outage('down');
      });
      assert.equal(stale.freshness.status, 'STALE');
      assert.equal(stale.bytes.toString(), 'newer');
    });
  });

  it('each resource name may be taken once per app', () => {
    const caching = createCaching(
      { memoryMaxBytes: 1024 * 1024, singleFlightLockMs: LOCK_MS, staleDeadlineMs: 1000 },
      { redis: undefined, keyPrefix: 'test:', registry: new Registry(), failures, log: Fastify().log },
    );
    caching.resource({ name: 'player', freshMs: () => 1, staleIfErrorMs: 1 });
    caching.resource({ name: 'profiles', freshMs: () => 1, staleIfErrorMs: 1 });
    assert.throws(
      () => caching.resource({ name: 'player', freshMs: () => 1, staleIfErrorMs: 1 }),
      /a cached resource named "player" already exists/,
    );
  });
});
