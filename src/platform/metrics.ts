import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

/** One registry per app (never prom-client's global one), so that two apps in one process stay apart. */
export function createMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** Latency buckets in seconds: from a cache hit (sub-millisecond) to an upstream timeout. */
const LATENCY_BUCKETS_SECONDS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/** Counts requests and their latency by method, route pattern (not raw URL: bounded labels) and status. */
export const httpMetrics = fp<{ registry: Registry }>(async (app: FastifyInstance, { registry }) => {
  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route and status.',
    labelNames,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer HTTP requests, by method, route and status.',
    labelNames,
    buckets: LATENCY_BUCKETS_SECONDS,
    registers: [registry],
  });
  // The series of each method, route and status, bound once: prom-client otherwise hashes the labels of
  // every observation. Bounded: routes are patterns, methods and statuses few.
  const series = new Map<string, { count(): void; observe(seconds: number): void }>();
  const seriesOf = (method: string, route: string, status: number) => {
    const key = `${method} ${status} ${route}`;
    let bound = series.get(key);
    if (!bound) {
      const labels = { method, route, status: String(status) };
      const counter = requests.labels(labels);
      const histogram = duration.labels(labels);
      bound = { count: () => counter.inc(), observe: (seconds) => histogram.observe(seconds) };
      series.set(key, bound);
    }
    return bound;
  };
  app.addHook('onResponse', async (request, reply) => {
    const bound = seriesOf(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode);
    bound.count();
    bound.observe(reply.elapsedTime / 1000);
  });
});
