import { setTimeout as sleep } from 'node:timers/promises';

/**
 * An upstream key's request budget. Every request to the upstream first takes one request from it, and
 * afterwards reports what the upstream said (its RateLimit-* headers, or a 429), so that the service never
 * sends a request the budget does not allow.
 *
 * The rules, the same for the in-process and the Redis budget:
 * - Until the upstream has told its limit (and no static limit is configured), one request at a time goes
 *   out, as a probe; the others wait for its answer.
 * - Taking decrements `remaining`; a window that has passed restores `limit`.
 * - An answer's `RateLimit-Remaining` lowers `remaining` (never raises it within a window), less the
 *   requests still in flight that the upstream may not have counted yet.
 * - A 429 empties the budget until the upstream's reset.
 */
export interface RateBudget {
  /** One request's worth, or how long until there is one. Waits (bounded) while a probe is out. */
  take(): Promise<BudgetGrant | BudgetDenial>;
  /** What the upstream answered to a granted request. Call exactly once per grant. */
  settle(ticket: string, observed: Observed): Promise<void>;
  /** Requests left in the current window, when known (for metrics). */
  remaining(): Promise<number | undefined>;
  /** Requests the upstream allows per window, once known (configured, or learned from its answers). */
  limit(): Promise<number | undefined>;
}

export interface BudgetGrant {
  readonly granted: true;
  readonly ticket: string;
}

export interface BudgetDenial {
  readonly granted: false;
  readonly retryAfterMs: number;
}

export interface Observed {
  readonly limit?: number;
  readonly remaining?: number;
  /** Seconds until the upstream's window resets. */
  readonly resetSeconds?: number;
  /** The upstream answered 429. */
  readonly throttled?: boolean;
}

export interface BudgetOptions {
  /** A limit known in advance (Mojang publishes one and sends no headers); learned from answers otherwise. */
  readonly limit?: number;
  /** The window assumed until the upstream says when its window resets. */
  readonly windowMs: number;
  /** How long a request may hold its ticket (its timeout and retries); a probe gives up waiting after this. */
  readonly holdMs: number;
}

export type TakeResult =
  | { kind: 'granted'; ticket: string }
  | { kind: 'denied'; retryAfterMs: number }
  | { kind: 'wait' };

const PROBE_POLL_MS = 10;

/** The time a budget goes by: the system's, or a test's. */
export interface BudgetClock {
  now(): number;
  sleep(ms: number): Promise<unknown>;
}

const systemClock: BudgetClock = { now: Date.now, sleep };

/** The waiting loop both budgets share: a probe being out means "ask again shortly". */
export async function takeWithWait(
  tryTake: () => Promise<TakeResult>,
  holdMs: number,
  clock: BudgetClock = systemClock,
): Promise<BudgetGrant | BudgetDenial> {
  const deadline = clock.now() + holdMs;
  for (;;) {
    const triedAt = clock.now();
    const result = await tryTake();
    if (result.kind === 'granted') return { granted: true, ticket: result.ticket };
    if (result.kind === 'denied') return { granted: false, retryAfterMs: Math.max(1, result.retryAfterMs) };
    // The last try is made at the deadline, not at the poll before it: a probe whose hold ends with this
    // wait (a lapsed Redis ticket) is then this caller's.
    if (triedAt >= deadline) return { granted: false, retryAfterMs: PROBE_POLL_MS };
    await clock.sleep(Math.max(0, Math.min(PROBE_POLL_MS, deadline - clock.now())));
  }
}

/** The in-process budget: one instance, one budget. */
export function createMemoryBudget(options: BudgetOptions, clock: BudgetClock = systemClock): RateBudget {
  const now = () => clock.now();
  let limit = options.limit;
  let remaining = options.limit;
  let resetAt: number | undefined;
  let inFlight = 0;
  let tickets = 0;

  const tryTake = async (): Promise<TakeResult> => {
    const at = now();
    if (resetAt !== undefined && at >= resetAt) {
      remaining = limit;
      resetAt = undefined;
    }
    if (remaining === undefined) {
      if (inFlight > 0) return { kind: 'wait' };
      inFlight += 1;
      return { kind: 'granted', ticket: String(++tickets) };
    }
    if (remaining <= 0) return { kind: 'denied', retryAfterMs: (resetAt ?? at + options.windowMs) - at };
    remaining -= 1;
    inFlight += 1;
    resetAt ??= at + options.windowMs;
    return { kind: 'granted', ticket: String(++tickets) };
  };

  return {
    take: () => takeWithWait(tryTake, options.holdMs, clock),
    async settle(_ticket, observed) {
      const at = now();
      inFlight = Math.max(0, inFlight - 1);
      if (observed.throttled) {
        remaining = 0;
        resetAt = at + (observed.resetSeconds ?? options.windowMs / 1000) * 1000;
        return;
      }
      if (observed.limit !== undefined) limit = observed.limit;
      if (observed.resetSeconds !== undefined) resetAt = at + observed.resetSeconds * 1000;
      if (observed.remaining !== undefined) {
        remaining = Math.max(
          0,
          Math.min(remaining ?? Number.POSITIVE_INFINITY, observed.remaining - inFlight),
        );
      }
    },
    async remaining() {
      return remaining;
    },
    async limit() {
      return limit;
    },
  };
}
