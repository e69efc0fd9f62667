import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { withHint } from '../../platform/auth/auth-errors.js';
import { principalOf } from '../../platform/auth/route-guard.js';
import { TokenPairSchema, tokenPairOf } from '../../platform/auth/token-pair.js';
import { errorResponses } from '../../platform/error-response.js';
import { RATE_LIMIT_HEADERS } from '../../platform/http/rate-limit-headers.js';
import { NO_STORE_HEADERS, responseDoc, withHeaders } from '../../platform/http/response-docs.js';
import type { Standing } from '../../platform/limits/buckets.js';
import type { QuotaStatus } from '../../upstream/owner-quota.js';
import { CallerSchema, RefreshRequestSchema } from './tokens.schemas.js';
import type { TokensService } from './tokens.service.js';

/** Where an owner stands in their limits, for `GET /auth/me`. */
export interface Standings {
  work(owner: bigint): Promise<Standing>;
  upstream(owner: bigint): Promise<QuotaStatus | undefined>;
  /** The owner's usage today (UTC). */
  usageToday(owner: bigint): Promise<{ day: string; requests: number; upstream: number; refused: number }>;
}

/**
 * `POST /auth/refresh`, limited to `rateLimitPerMinute` requests per minute and client address, and
 * `GET /auth/me`.
 */
export const tokensRoutes =
  (
    service: TokensService,
    rateLimitPerMinute: number,
    standings: Standings,
    wayIn?: string,
  ): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/auth/refresh',
      {
        config: { addressLimitPerMinute: rateLimitPerMinute },
        schema: {
          tags: ['Auth'],
          operationId: 'refreshToken',
          summary: 'Refresh an authentication token',
          description:
            'Exchanges a token (valid, or expired for at most the refresh window, 7 days by default) for a new one with the ' +
            'same owner and grants. Each token can be exchanged once: presenting an exchanged token again revokes every ' +
            'token of its chain (reuse detection) and answers 401. Limited per client address (RateLimit policy "address").',
          // The token to exchange is in the body: no Authorization header.
          security: [],
          body: RefreshRequestSchema,
          response: withHeaders(
            {
              200: responseDoc(TokenPairSchema, {
                description: 'The new token; the one sent is exchanged.',
                headers: NO_STORE_HEADERS,
              }),
              ...errorResponses(400, 401, 413, 415, 429, 500, 503),
            },
            RATE_LIMIT_HEADERS,
          ),
        },
      },
      async (request, reply) => {
        const issued = await service
          .refresh(request.body.token, request.body.expires_at)
          .catch((error: unknown) => {
            throw withHint(error, wayIn);
          });
        // A token in a response is kept by no cache (RFC 6749, 5.1).
        reply.header('cache-control', 'no-store');
        return tokenPairOf(issued);
      },
    );

    app.get(
      '/auth/me',
      {
        onRequest: app.requireGrant(undefined, { session: true }),
        schema: {
          tags: ['Auth'],
          operationId: 'getCaller',
          summary: 'Who you are, and where you stand in your limits',
          description:
            "The token's owner, grants and expiry; the owner's budget of the service's work and their share of the " +
            "upstream key, as the RateLimit headers of every answer say them. Any valid token, or the portal's session.",
          security: app.portalSecurity,
          response: { 200: responseDoc(CallerSchema), ...errorResponses(401) },
        },
      },
      async (request) => {
        const { owner, grants, jti, expiresAt, session } = principalOf(request);
        const [work, upstream, usage] = await Promise.all([
          standings.work(owner),
          standings.upstream(owner),
          standings.usageToday(owner),
        ]);
        return {
          owner,
          grants: [...grants],
          token: session ? null : { jti, expires_at: new Date(expiresAt).toISOString() },
          budget: {
            limit: work.capacity,
            window_seconds: work.windowSeconds,
            remaining: work.remaining,
            reset_seconds: work.resetSeconds,
          },
          usage_today: {
            day: usage.day,
            requests: usage.requests,
            upstream_lookups: usage.upstream,
            refused: usage.refused,
          },
          upstream: upstream
            ? {
                limit: upstream.limit,
                window_seconds: upstream.windowSeconds,
                remaining: upstream.remaining,
                reset_seconds: upstream.resetSeconds,
              }
            : null,
        };
      },
    );
  };
