/**
 * Stops calling an upstream that keeps failing: after `failures` consecutive failures the circuit opens
 * for `cooldownMs`; then one trial call is let through (half-open), and its outcome closes or reopens it.
 * In-process: each instance judges the upstream by what it sees itself.
 */
export interface CircuitBreaker {
  /** Whether a call may go out now; when it may not, how long until it may. */
  admit(): { allowed: true } | { allowed: false; retryAfterMs: number };
  succeeded(): void;
  failed(): void;
  readonly state: 'closed' | 'open' | 'half-open';
}

export function createCircuitBreaker(
  failures: number,
  cooldownMs: number,
  now: () => number = Date.now,
): CircuitBreaker {
  let consecutive = 0;
  let openedAt: number | undefined;
  let trialInFlight = false;

  return {
    get state() {
      if (openedAt === undefined) return 'closed';
      return now() - openedAt >= cooldownMs ? 'half-open' : 'open';
    },
    admit() {
      if (openedAt === undefined) return { allowed: true };
      const waited = now() - openedAt;
      if (waited < cooldownMs) return { allowed: false, retryAfterMs: cooldownMs - waited };
      if (trialInFlight) return { allowed: false, retryAfterMs: Math.min(cooldownMs, 1000) };
      trialInFlight = true;
      return { allowed: true };
    },
    succeeded() {
      consecutive = 0;
      openedAt = undefined;
      trialInFlight = false;
    },
    failed() {
      consecutive += 1;
      trialInFlight = false;
      if (openedAt !== undefined || consecutive >= failures) openedAt = now();
    },
  };
}
