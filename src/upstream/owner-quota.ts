import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../platform/logger.js';

/**
 * Each owner's share of the upstream key: at most `sharePercent` of the key's limit (as the Hypixel budget
 * learned it) in upstream-costing lookups per window, so that one client flooding cold lookups cannot spend
 * every other client's budget. Cache hits never reach it.
 *
 * It is charged before the key's budget is asked (a refused owner never holds any of the key), so that a
 * flood is turned away at once. Until the key's limit is known, an owner's lookups go out one at a time
 * (`guarded`), so that a flood at start cannot pass before there is a limit to hold it to.
 *
 * A window starts at an owner's first charged lookup and lasts the key's window; the count then starts
 * again. In-process here; owner-quota-redis.ts shares it across instances, as the budget is shared.
 */
export interface OwnerQuota {
  /** Charges one upstream-costing lookup to `owner`, or refuses it with the owner's standing. */
  take(owner: bigint): Promise<QuotaTake>;
  /**
   * Once per allowed take, when its lookup is over; `sent: false` gives the charge back (nothing reached
   * the upstream: the key's budget was used up).
   */
  settle(owner: bigint, sent: boolean): Promise<void>;
  /** The owner's standing, for the RateLimit headers; undefined until the key's limit is known. */
  status(owner: bigint): Promise<QuotaStatus | undefined>;
}

export type QuotaTake =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly status: QuotaStatus };

export interface QuotaStatus {
  /** Upstream-costing lookups an owner may make per window. */
  readonly limit: number;
  readonly remaining: number;
  /** Seconds until the owner's window ends and `remaining` is `limit` again. */
  readonly resetSeconds: number;
  readonly windowSeconds: number;
}

export interface QuotaOptions {
  readonly sharePercent: number;
  readonly windowMs: number;
}

/** One owner's share of a key limit: never less than one lookup. */
export const shareOf = (keyLimit: number, sharePercent: number): number =>
  Math.max(1, Math.floor((keyLimit * sharePercent) / 100));

export function quotaStatus(limit: number, used: number, resetMs: number, windowMs: number): QuotaStatus {
  return {
    limit,
    remaining: Math.max(0, limit - used),
    resetSeconds: Math.max(1, Math.ceil(resetMs / 1000)),
    windowSeconds: Math.round(windowMs / 1000),
  };
}

const LIMIT_POLL_MS = 10;

export interface GuardOptions {
  /** The key's limit, once known. */
  keyLimit(): Promise<number | undefined>;
  /** How long a lookup waits for the owner's previous one while the limit is unknown; then it goes on. */
  readonly holdMs: number;
  readonly log: Pick<Logger, 'warn'>;
}

/**
 * The rules around the count, the same for both quotas, in-process:
 * - While the key's limit is unknown, an owner's lookup waits until their previous one is over (bounded by
 *   `holdMs`): one at a time, until a Hypixel answer tells the limit.
 * - An owner's quota running out is logged once, until a lookup of theirs is allowed again (not on every
 *   refused request, which would flood the log exactly when it is busiest).
 */
export function guarded(quota: OwnerQuota, { keyLimit, holdMs, log }: GuardOptions): OwnerQuota {
  const inFlight = new Map<bigint, number>();
  const usedUp = new Set<bigint>();

  const leave = (owner: bigint) => {
    const left = (inFlight.get(owner) ?? 1) - 1;
    if (left > 0) inFlight.set(owner, left);
    else inFlight.delete(owner);
  };

  /** Waits for the owner's turn, and takes it: no await between the last look and the taking. */
  async function enter(owner: bigint): Promise<void> {
    const deadline = Date.now() + holdMs;
    while (inFlight.has(owner) && Date.now() < deadline && (await keyLimit()) === undefined) {
      await sleep(LIMIT_POLL_MS);
    }
    inFlight.set(owner, (inFlight.get(owner) ?? 0) + 1);
  }

  return {
    ...quota,
    async take(owner) {
      await enter(owner);
      let taken: QuotaTake;
      try {
        taken = await quota.take(owner);
      } catch (error) {
        leave(owner);
        throw error;
      }
      if (taken.allowed) {
        usedUp.delete(owner);
        return taken;
      }
      leave(owner);
      if (!usedUp.has(owner)) {
        usedUp.add(owner);
        const { limit, windowSeconds, resetSeconds } = taken.status;
        log.warn(
          { owner: owner.toString(), limit, windowSeconds, retryAfterSeconds: resetSeconds },
          'an owner used up their upstream quota; their uncached lookups are refused until it resets',
        );
      }
      return taken;
    },
    async settle(owner, sent) {
      leave(owner);
      await quota.settle(owner, sent);
    },
  };
}

/** Sweep ended windows once per this many charges, so that owners who went away do not stay in memory. */
const SWEEP_EVERY = 1024;

/** The in-process quota: one instance, one count per owner. */
export function createMemoryQuota(
  options: QuotaOptions,
  keyLimit: () => Promise<number | undefined>,
  now: () => number = Date.now,
): OwnerQuota {
  const windows = new Map<bigint, { used: number; endsAt: number }>();
  let charges = 0;

  const windowOf = (owner: bigint, at: number) => {
    const window = windows.get(owner);
    return window && at < window.endsAt ? window : undefined;
  };
  const limitNow = async () => {
    const limit = await keyLimit();
    return limit === undefined ? undefined : shareOf(limit, options.sharePercent);
  };

  return {
    async take(owner) {
      const limit = await limitNow();
      const at = now();
      const window = windowOf(owner, at);
      if (limit !== undefined && window && window.used >= limit) {
        return {
          allowed: false,
          status: quotaStatus(limit, window.used, window.endsAt - at, options.windowMs),
        };
      }
      if (window) window.used += 1;
      else windows.set(owner, { used: 1, endsAt: at + options.windowMs });
      if (++charges % SWEEP_EVERY === 0) {
        for (const [other, ended] of windows) if (at >= ended.endsAt) windows.delete(other);
      }
      return { allowed: true };
    },
    async settle(owner, sent) {
      const window = windowOf(owner, now());
      if (!sent && window && window.used > 0) window.used -= 1;
    },
    async status(owner) {
      const limit = await limitNow();
      if (limit === undefined) return undefined;
      const at = now();
      const window = windowOf(owner, at);
      return quotaStatus(
        limit,
        window?.used ?? 0,
        window ? window.endsAt - at : options.windowMs,
        options.windowMs,
      );
    },
  };
}
