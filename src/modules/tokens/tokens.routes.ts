import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../../platform/error-response.js';
import {
  NO_STORE_HEADERS,
  RATE_LIMITED_HEADERS,
  responseDoc,
  withHeaders,
} from '../../platform/http/response-docs.js';
import { RefreshRequestSchema, TokenPairSchema } from './tokens.schemas.js';
import type { TokensService } from './tokens.service.js';

/** `POST /auth/refresh`, rate limited to `rateLimitPerMinute` requests per minute and client address. */
export const tokensRoutes =
  (service: TokensService, rateLimitPerMinute: number): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/auth/refresh',
      {
        config: { rateLimit: { max: rateLimitPerMinute, timeWindow: 60_000 } },
        schema: {
          tags: ['Auth'],
          operationId: 'refreshToken',
          summary: 'Refresh an authentication token',
          description:
            'Exchanges a token (valid, or expired for at most the refresh window, 7 days by default) for a new one with the ' +
            'same owner and grants. Each token can be exchanged once: presenting an exchanged token again revokes every ' +
            'token of its chain (reuse detection) and answers 401. Rate limited per client address.',
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
            RATE_LIMITED_HEADERS,
          ),
        },
      },
      async (request, reply) => {
        const issued = await service.refresh(request.body.token, request.body.expires_at);
        // A token in a response is kept by no cache (RFC 6749, 5.1).
        reply.header('cache-control', 'no-store');
        return { token: issued.token, expires_at: issued.expiresAt.toISOString() };
      },
    );
  };
