import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Registry } from 'prom-client';
import { requireStaticBearer } from '../../platform/auth/static-token-guard.js';
import { errorResponse, errorResponses } from '../../platform/error-response.js';
import { AppError, ErrorKinds } from '../../platform/errors.js';
import { responseDoc } from '../../platform/http/response-docs.js';
import { HealthSchema, MetricsSchema, ReadySchema } from './health.schemas.js';
import type { HealthService } from './health.service.js';

/** How soon a load balancer may ask again: what the other answers of a database outage say too. */
const NOT_READY_RETRY_AFTER_SECONDS = 2;

/** A 503 naming each dependency that does not answer (the log says why), with when to ask again. */
const notReady = (unavailable: readonly string[]): AppError =>
  new AppError(
    unavailable.map((dependency) => ({
      kind: ErrorKinds.DEPENDENCY_UNAVAILABLE,
      reason: `${dependency} is unavailable`,
      developerReason: `${dependency} does not answer; the service log says why`,
    })),
    { cause: 'Not ready', headers: { 'retry-after': String(NOT_READY_RETRY_AFTER_SECONDS) } },
  );

/** `/health`, `/ready`, and `/metrics`: public, or behind `metricsToken` when one is configured. */
export const healthRoutes =
  (service: HealthService, metrics: Registry, metricsToken: string | undefined): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/health',
      {
        schema: {
          tags: ['Operations'],
          operationId: 'getHealth',
          summary: 'Liveness: the process answers',
          security: [],
          response: { 200: responseDoc(HealthSchema) },
        },
      },
      async () => ({ status: 'ok' as const }),
    );

    app.get(
      '/ready',
      {
        schema: {
          tags: ['Operations'],
          operationId: 'getReadiness',
          summary: 'Readiness: database reachable, migrations applied, Redis reachable when configured',
          security: [],
          response: {
            200: responseDoc(ReadySchema),
            503: errorResponse(
              503,
              'Not ready: each `extra` entry names a dependency that does not answer (the log says why; ' +
                'Retry-After: 2); or the instance is shutting down (Retry-After: 1).',
            ),
          },
        },
      },
      async () => {
        const readiness = await service.readiness();
        if (readiness.status === 'not_ready') throw notReady(readiness.unavailable);
        return readiness;
      },
    );

    app.get(
      '/metrics',
      {
        ...(metricsToken ? { onRequest: requireStaticBearer(metricsToken, 'METRICS_TOKEN') } : {}),
        schema: {
          tags: ['Operations'],
          operationId: 'getMetrics',
          summary: 'Prometheus metrics: requests by route and status, latency histograms, process metrics',
          description:
            'Public unless METRICS_TOKEN is set (the production setting): then it needs `Authorization: Bearer <METRICS_TOKEN>`.',
          // As this instance is configured: public, or behind METRICS_TOKEN (a static secret, not a JWT).
          security: metricsToken ? [{ metricsToken: [] }] : [],
          response: {
            200: responseDoc(MetricsSchema, { mediaType: 'text/plain' }),
            ...(metricsToken ? errorResponses(401) : {}),
          },
        },
      },
      async (_request, reply) => {
        reply.type(metrics.contentType);
        return metrics.metrics();
      },
    );
  };
