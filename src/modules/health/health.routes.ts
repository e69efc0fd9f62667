import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Registry } from 'prom-client';
import { errorResponses } from '../../platform/error-response.js';
import { HealthSchema, MetricsSchema, ReadySchema } from './health.schemas.js';
import type { HealthService } from './health.service.js';

export const healthRoutes =
  (service: HealthService, metrics: Registry): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/health',
      {
        schema: {
          tags: ['Operations'],
          operationId: 'getHealth',
          summary: 'Liveness: the process answers',
          response: { 200: HealthSchema },
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
          response: { 200: ReadySchema, ...errorResponses(503) },
        },
      },
      async () => service.readiness(),
    );

    app.get(
      '/metrics',
      {
        schema: {
          tags: ['Operations'],
          operationId: 'getMetrics',
          summary: 'Prometheus metrics: requests by route and status, latency histograms, process metrics',
          produces: ['text/plain'],
          response: { 200: MetricsSchema },
        },
      },
      async (_request, reply) => {
        reply.type(metrics.contentType);
        return metrics.metrics();
      },
    );
  };
