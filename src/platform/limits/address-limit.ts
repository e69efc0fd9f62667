import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { AppError, ErrorKinds } from '../errors.js';
import { addRateLimitHeaders } from '../http/rate-limit-headers.js';
import type { Buckets } from './buckets.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Requests per minute one client address may send to this route (its token issuing routes). */
    addressLimitPerMinute?: number;
  }
}

const MINUTE_MS = 60_000;

/**
 * Per-client-address limits for the routes that ask for one (`config.addressLimitPerMinute`): the routes
 * that issue tokens, where a caller may have no token yet (refresh) or one whose owner is not who the
 * limit protects. A bucket per route and address (the address is Fastify's `request.ip`: the client's
 * own behind a proxy with TRUST_PROXY), shared by the instances through Redis; 429 RATE_LIMITED beyond it,
 * before the body is read. Every answer of such a route carries the `"address"` RateLimit headers.
 */
export const addressLimits = fp<{ buckets: Buckets }>(async (app: FastifyInstance, { buckets }) => {
  app.addHook('onRequest', async (request, reply) => {
    const perMinute = request.routeOptions.config.addressLimitPerMinute;
    if (perMinute === undefined) return;
    const policy = { capacity: perMinute, windowMs: MINUTE_MS };
    const admission = await buckets.take(`address:${request.routeOptions.url}:${request.ip}`, 1, policy);
    addRateLimitHeaders(reply, 'address', admission.standing);
    if (admission.admitted) return;
    const retryAfterSeconds = Math.max(1, Math.ceil(admission.retryAfterMs / 1000));
    throw AppError.of(ErrorKinds.RATE_LIMITED, {
      developerReason: `at most ${perMinute} requests per minute from one address to this endpoint; retry after ${retryAfterSeconds} s`,
      headers: { 'retry-after': String(retryAfterSeconds) },
    });
  });
});
