/**
 * Token buckets: the one mechanism behind the service's own rate limits (an owner's work budget, the
 * per-address limit of the routes that issue tokens). A bucket holds up to `capacity` units and refills
 * continuously, `capacity` per window, so a client may spend its whole capacity at once and then as fast as
 * it refills: bursts are bounded by the capacity, the sustained rate by capacity / window.
 *
 * A request is admitted when the bucket holds its cost (or is full, for a cost above the capacity: such a
 * request would otherwise never pass), and its cost is taken even past empty: the bucket then owes it, and
 * admits nothing until it has refilled what it owes. So work whose cost is known only once done (the days a
 * history read returned) is charged after it with `charge`, all of it however much the bucket then owes,
 * and a debtor waits for it: over time no key gets more than its rate, however many requests it had in
 * flight when the work was charged.
 */
export interface BucketPolicy {
  /** Units the bucket holds when full; it refills this many per window. */
  readonly capacity: number;
  readonly windowMs: number;
}

/** Where a bucket stands, for the RateLimit headers. */
export interface Standing {
  readonly capacity: number;
  readonly windowSeconds: number;
  /** Whole units it holds now (0 while it owes). */
  readonly remaining: number;
  /** Seconds until it is full again (at least 1 while it is not). */
  readonly resetSeconds: number;
}

export type Admission =
  | { readonly admitted: true; readonly standing: Standing }
  | { readonly admitted: false; readonly standing: Standing; readonly retryAfterMs: number };

export interface Buckets {
  /** Admits `cost` from the key's bucket, taking it, or refuses with how long until it would be admitted. */
  take(key: string, cost: number, policy: BucketPolicy): Promise<Admission>;
  /** Takes `cost` for work already done, admitted or not, however much the bucket then owes (negative: gives back). */
  charge(key: string, cost: number, policy: BucketPolicy): Promise<Standing>;
  standing(key: string, policy: BucketPolicy): Promise<Standing>;
}

/** A bucket's level: units held (negative while it owes) as of `at` (epoch ms). */
export interface Level {
  readonly tokens: number;
  readonly at: number;
}

const rateOf = ({ capacity, windowMs }: BucketPolicy) => capacity / windowMs;

/** The level at `now`, refilled since it was read (a bucket never seen is full). */
export function refilled(level: Level | undefined, policy: BucketPolicy, now: number): number {
  if (!level) return policy.capacity;
  return Math.min(policy.capacity, level.tokens + Math.max(0, now - level.at) * rateOf(policy));
}

/** What a request needs the bucket to hold to be admitted: its cost, or the whole capacity if more. */
export const admissionNeed = (cost: number, policy: BucketPolicy) => Math.min(cost, policy.capacity);

/** Milliseconds until a bucket holding `tokens` holds `need`. */
export const msUntil = (tokens: number, need: number, policy: BucketPolicy) =>
  Math.max(0, Math.ceil((need - tokens) / rateOf(policy)));

/** Where a bucket holding `tokens` stands (never more than its capacity, never less than nothing left). */
export function standingOf(tokens: number, policy: BucketPolicy): Standing {
  return {
    capacity: policy.capacity,
    windowSeconds: Math.max(1, Math.round(policy.windowMs / 1000)),
    remaining: Math.max(0, Math.min(policy.capacity, Math.floor(tokens))),
    resetSeconds:
      tokens >= policy.capacity ? 0 : Math.max(1, Math.ceil(msUntil(tokens, policy.capacity, policy) / 1000)),
  };
}

/** Forget buckets that have refilled, once per this many operations, so that clients gone leave no trace. */
const SWEEP_EVERY = 4096;

/** The in-process buckets: one instance, exact. */
export function createMemoryBuckets(now: () => number = Date.now): Buckets {
  const levels = new Map<string, Level & { readonly policy: BucketPolicy }>();
  let operations = 0;

  function sweep(at: number) {
    if (++operations % SWEEP_EVERY !== 0) return;
    for (const [key, level] of levels)
      if (refilled(level, level.policy, at) >= level.policy.capacity) levels.delete(key);
  }

  function settle(key: string, tokens: number, policy: BucketPolicy, at: number): Standing {
    levels.set(key, { tokens, at, policy });
    sweep(at);
    return standingOf(tokens, policy);
  }

  return {
    async take(key, cost, policy) {
      const at = now();
      const tokens = refilled(levels.get(key), policy, at);
      const need = admissionNeed(cost, policy);
      if (tokens < need)
        return {
          admitted: false,
          standing: standingOf(tokens, policy),
          retryAfterMs: msUntil(tokens, need, policy),
        };
      return { admitted: true, standing: settle(key, tokens - cost, policy, at) };
    },
    async charge(key, cost, policy) {
      const at = now();
      // A negative cost gives units back (work reserved ahead that was not done), never past full.
      return settle(key, Math.min(policy.capacity, refilled(levels.get(key), policy, at) - cost), policy, at);
    },
    async standing(key, policy) {
      return standingOf(refilled(levels.get(key), policy, now()), policy);
    },
  };
}
