import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import type { Logger } from '../logger.js';
import { redisOutageLog } from '../redis.js';
import {
  type Admission,
  admissionNeed,
  type BucketPolicy,
  type Buckets,
  createMemoryBuckets,
  type Level,
  refilled,
  type Standing,
  standingOf,
} from './buckets.js';

/*
 * Buckets shared by every instance through Redis: one hash per bucket, `{tokens, at}`, refilled and taken
 * by a Lua script on Redis's own clock, so a take cannot slip past the level between reading and writing,
 * and instances with skewed clocks agree. The hash expires once the bucket would be full again.
 */

/** Refills the bucket KEYS[1] (ARGV: capacity, windowMs); leaves `cap`, `rate`, `now`, `tokens` set. */
const REFILL = `local cap = tonumber(ARGV[1])
local rate = cap / tonumber(ARGV[2])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local level = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(level[1]) or cap
local at = tonumber(level[2]) or now
tokens = math.min(cap, tokens + math.max(0, now - at) * rate)
local function keep(value)
  redis.call('HSET', KEYS[1], 'tokens', tostring(value), 'at', now)
  redis.call('PEXPIRE', KEYS[1], math.ceil((cap - value) / rate) + 1000)
end`;

/**
 * ARGV[3] need, ARGV[4] want: when the bucket holds `need` (or is full, for a need above the capacity) it
 * grants at least `need` and up to `want`, and may owe after it. Returns {granted, tokens
 * after (as text: a fraction)}; granted 0 is a refusal.
 */
const TAKE = `${REFILL}
local need = tonumber(ARGV[3])
local granted = 0
if tokens >= math.min(need, cap) then
  granted = math.max(need, math.min(tonumber(ARGV[4]), math.floor(tokens)))
  tokens = tokens - granted
  keep(tokens)
end
return {granted, tostring(tokens)}`;

/** ARGV[3] units: taken for work done (a negative amount gives units back). Returns {0, tokens after}. */
const CHARGE = `${REFILL}
tokens = math.min(cap, tokens - tonumber(ARGV[3]))
keep(tokens)
return {0, tostring(tokens)}`;

/** Returns {0, tokens now}, changing nothing. */
const READ = `${REFILL}
return {0, tostring(tokens)}`;

/** What asking Redis for units came to. */
type Outcome = 'reserved' | 'refused' | 'unavailable';

/** A bucket as this instance holds it: units taken from Redis and not spent yet, and the last level seen. */
interface Held {
  allowance: number;
  seen: Level | undefined;
  /**
   * Until when Redis refused, under a policy of this capacity: takes needing as much are refused here
   * without asking again (unless the policy changed: an owner given a larger budget).
   */
  refusedUntil: number;
  refusedCapacity: number;
  /** What the refused take lacked: a take needing less may still pass, and asks. */
  refusedNeed: number;
  /** The take asking Redis now: others wait for it. */
  asking: Promise<Outcome> | undefined;
}

/** Buckets this instance keeps a reservation of (the most active). */
const HELD_KEPT = 10_000;
/** An instance takes this share of a bucket's capacity at a time beyond the cost that made it ask. */
const RESERVATION_SHARE = 20;

/**
 * Buckets in Redis, under `keyPrefix<key>`. A take asking Redis each time would put a round trip in front
 * of every cache hit, so each instance reserves units ahead: a take that its reservation covers asks
 * nothing, and one that it does not takes what it lacks plus a twentieth of the capacity. An instance thus
 * holds back at most a twentieth of a bucket from the others, and never lets more through than Redis
 * granted. A refusal is remembered until the time it named. While Redis cannot be reached, each instance
 * keeps its own buckets instead (the outage is logged once as it starts and once as it ends).
 */
export function createRedisBuckets(redis: Redis, keyPrefix: string, log: Logger): Buckets {
  const local = createMemoryBuckets();
  const held = new LRUCache<string, Held>({ max: HELD_KEPT });
  const outage = redisOutageLog(
    log,
    "redis rate limits unavailable; using this instance's own buckets",
    'redis rate limits available again',
  );

  const heldOf = (key: string): Held => {
    let bucket = held.get(key);
    if (!bucket) {
      bucket = {
        allowance: 0,
        seen: undefined,
        refusedUntil: 0,
        refusedCapacity: 0,
        refusedNeed: 0,
        asking: undefined,
      };
      held.set(key, bucket);
    }
    return bucket;
  };

  /** Runs a script on the bucket; the level after it, or undefined when Redis failed (then told). */
  async function run(script: string, key: string, policy: BucketPolicy, ...args: number[]) {
    const answer = await outage.attempt(
      redis.eval(script, 1, `${keyPrefix}${key}`, policy.capacity, policy.windowMs, ...args) as Promise<
        [number, string]
      >,
    );
    return answer && { granted: Number(answer[0]), level: { tokens: Number(answer[1]), at: Date.now() } };
  }

  /**
   * Asks Redis for `need` units and a twentieth of the capacity ahead, into the bucket's reservation, or
   * for when it will hold them (a refusal, remembered).
   */
  async function reserve(bucket: Held, key: string, need: number, policy: BucketPolicy): Promise<Outcome> {
    const want = need + Math.max(1, Math.floor(policy.capacity / RESERVATION_SHARE));
    const answer = await run(TAKE, key, policy, need, want);
    if (!answer) return 'unavailable';
    bucket.seen = answer.level;
    if (answer.granted > 0) {
      bucket.allowance += answer.granted;
      return 'reserved';
    }
    const lacking = admissionNeed(need, policy) - answer.level.tokens;
    bucket.refusedUntil = Date.now() + Math.max(1, Math.ceil((lacking * policy.windowMs) / policy.capacity));
    bucket.refusedCapacity = policy.capacity;
    bucket.refusedNeed = need;
    return 'refused';
  }

  const refusal = (bucket: Held, policy: BucketPolicy): Admission => ({
    admitted: false,
    standing: standingHere(bucket, policy),
    retryAfterMs: Math.max(1, bucket.refusedUntil - Date.now()),
  });

  /** What the bucket holds for this instance's clients: the level last seen, refilled, and the reservation. */
  const standingHere = (bucket: Held, policy: BucketPolicy): Standing =>
    standingOf(refilled(bucket.seen, policy, Date.now()) + bucket.allowance, policy);

  return {
    async take(key, cost, policy): Promise<Admission> {
      const bucket = heldOf(key);
      // Concurrent takes of one bucket ask Redis one at a time, and the others then spend what it
      // reserved: each asking for itself would reserve ahead, and a burst of first requests would drain
      // the bucket into reservations.
      for (;;) {
        if (bucket.allowance >= cost) {
          bucket.allowance -= cost;
          return { admitted: true, standing: standingHere(bucket, policy) };
        }
        if (
          Date.now() < bucket.refusedUntil &&
          bucket.refusedCapacity === policy.capacity &&
          cost - bucket.allowance >= bucket.refusedNeed
        )
          return refusal(bucket, policy);
        if (!bucket.asking) {
          bucket.asking = reserve(bucket, key, cost - bucket.allowance, policy).finally(() => {
            bucket.asking = undefined;
          });
        }
        const outcome = await bucket.asking;
        if (outcome === 'unavailable') return local.take(key, cost, policy);
        // Reserved or refused, the loop looks again: a take that needs less than a refused one may still pass.
      }
    },

    async charge(key, cost, policy) {
      const bucket = heldOf(key);
      if (bucket.allowance >= cost) {
        bucket.allowance -= cost;
        return standingHere(bucket, policy);
      }
      const owed = cost - bucket.allowance;
      bucket.allowance = 0;
      const answer = await run(CHARGE, key, policy, owed);
      if (!answer) return local.charge(key, cost, policy);
      bucket.seen = answer.level;
      return standingHere(bucket, policy);
    },

    async standing(key, policy) {
      const bucket = heldOf(key);
      const answer = await run(READ, key, policy);
      if (!answer) return local.standing(key, policy);
      bucket.seen = answer.level;
      return standingHere(bucket, policy);
    },
  };
}
