import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export type UpstreamOutcome =
  | 'ok'
  /** A 2xx answer that is not JSON or not the expected shape (an HTML error page, a proxy's reply). */
  | 'bad_response'
  | 'not_found'
  | 'client_error'
  | 'throttled'
  | 'server_error'
  | 'timeout'
  | 'network_error'
  | 'budget_denied'
  /** Not sent: the owner it was for used up their share of the key. */
  | 'quota_denied'
  | 'circuit_open';

export interface UpstreamMetrics {
  called(upstream: string, endpoint: string, outcome: UpstreamOutcome, seconds?: number): void;
  /** Reports the budget's remaining requests whenever metrics are scraped (no work per request). */
  watchBudget(upstream: string, remaining: () => Promise<number | undefined>): void;
}

export function createUpstreamMetrics(registry: Registry): UpstreamMetrics {
  const calls = new Counter({
    name: 'upstream_requests_total',
    help: 'Requests to the upstreams (and requests not sent: budget_denied, quota_denied, circuit_open), by outcome.',
    labelNames: ['upstream', 'endpoint', 'outcome'],
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'upstream_request_duration_seconds',
    help: 'Time the upstreams took to answer, by endpoint.',
    labelNames: ['upstream', 'endpoint'],
    buckets: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10],
    registers: [registry],
  });
  const budgets = new Map<string, () => Promise<number | undefined>>();
  new Gauge({
    name: 'upstream_budget_remaining',
    help: 'Requests left in the upstream key budget for the current window, when known.',
    labelNames: ['upstream'],
    registers: [registry],
    async collect() {
      for (const [upstream, remaining] of budgets) {
        const value = await remaining().catch(() => undefined);
        if (value !== undefined) this.set({ upstream }, value);
      }
    },
  });
  return {
    called(upstream, endpoint, outcome, seconds) {
      calls.inc({ upstream, endpoint, outcome });
      if (seconds !== undefined) latency.observe({ upstream, endpoint }, seconds);
    },
    watchBudget(upstream, remaining) {
      budgets.set(upstream, remaining);
    },
  };
}
