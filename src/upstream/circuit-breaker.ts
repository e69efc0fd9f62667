/**
 * Stops calling an upstream that keeps failing: after `failures` consecutive failed requests the circuit
 * opens for `cooldownMs`; then one trial request is let through (half-open), and its outcome closes or
 * reopens it. A request counts once, whatever number of attempts (retries) it took.
 * In-process: each instance judges the upstream by what it sees itself.
 */
export interface CircuitBreaker {
  /** Whether a request may go out now; when it may not, how long until it may. */
  admit(): { allowed: true } | { allowed: false; retryAfterMs: number };
  succeeded(): void;
  failed(): void;
  /** An admitted request that sent nothing after all (its budget was used up): it proves nothing. */
  abandoned(): void;
  readonly state: 'closed' | 'open' | 'half-open';
}

export interface CircuitBreakerOptions {
  readonly now?: () => number;
  /** Told when the circuit opens (after `failures` failed requests, or a failed trial) and when it closes. */
  readonly onChange?: (change: 'opened' | 'closed', consecutiveFailures: number) => void;
}

export function createCircuitBreaker(
  failures: number,
  cooldownMs: number,
  { now = Date.now, onChange }: CircuitBreakerOptions = {},
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
      const wasOpen = openedAt !== undefined;
      consecutive = 0;
      openedAt = undefined;
      trialInFlight = false;
      if (wasOpen) onChange?.('closed', 0);
    },
    failed() {
      consecutive += 1;
      // Opens when the count is reached, or reopens when the half-open trial fails. A request admitted
      // before the circuit opened and failing after neither restarts the cooldown nor opens it again.
      const trialFailed = openedAt !== undefined && trialInFlight;
      trialInFlight = false;
      if (trialFailed || (openedAt === undefined && consecutive >= failures)) {
        openedAt = now();
        onChange?.('opened', consecutive);
      }
    },
    abandoned() {
      trialInFlight = false;
    },
  };
}
