import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Redis } from 'ioredis';
import { AppError, ErrorKinds } from './errors.js';

/**
 * Per-client-address rate limits for the routes that ask for one (`config.rateLimit`). With Redis the
 * counts are shared by every instance; if Redis fails, requests pass rather than fail (skipOnError).
 */
export const rateLimiting = fp<{ redis: Redis | undefined; keyPrefix: string }>(
  async (app: FastifyInstance, { redis, keyPrefix }) => {
    await app.register(rateLimit, {
      global: false,
      ...(redis ? { redis, nameSpace: `${keyPrefix}rate-limit:` } : {}),
      skipOnError: true,
      errorResponseBuilder: (_request, context) =>
        AppError.of(ErrorKinds.RATE_LIMITED, {
          developerReason: `at most ${context.max} requests per ${context.after} from one address; retry after ${Math.ceil(context.ttl / 1000)} s`,
        }),
    });
  },
);
