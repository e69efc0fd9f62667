import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { withHint } from '../../platform/auth/auth-errors.js';
import { principalOf } from '../../platform/auth/route-guard.js';
import { TokenPairSchema, tokenPairOf } from '../../platform/auth/token-pair.js';
import { errorResponses } from '../../platform/error-response.js';
import { RATE_LIMIT_HEADERS } from '../../platform/http/rate-limit-headers.js';
import { NO_STORE_HEADERS, responseDoc, withHeaders } from '../../platform/http/response-docs.js';
import { WorkCost } from '../../platform/limits/work-budget.js';
import type { ApplicationKeysService } from './application-keys.service.js';
import { keyStatusWire } from './applications.reply.js';
import {
  ApplicationParams,
  CollectedKeySchema,
  KeyStatusSchema,
  TokenRequestSchema,
} from './applications.schemas.js';

const BASE = '/admin/developer/applications/:id/key';
const TAGS = ['Developer'];
/** A key or a token in a response is kept by no cache (RFC 6749, 5.1). */
const NO_STORE = 'no-store';

/**
 * An approved application's key, its owner's alone: collect it once, rotate it, revoke it; and
 * `POST /auth/token`, which exchanges a key for a token as often as needed. The routes that hand out a
 * secret are limited per client address, like /auth/refresh.
 */
export const applicationKeysRoutes =
  (keys: ApplicationKeysService, rateLimitPerMinute: number, wayIn?: string): FastifyPluginAsyncTypebox =>
  async (app) => {
    // A bearer token, or the developer portal's session (with its CSRF token when it changes anything).
    const security = app.portalSecurity;
    const handsOutSecret = { workCost: WorkCost.write, addressLimitPerMinute: rateLimitPerMinute };
    const keyAnswer = withHeaders(
      {
        200: responseDoc(CollectedKeySchema, {
          description: 'The key, shown this once: keep it secret.',
          headers: NO_STORE_HEADERS,
        }),
        ...errorResponses(400, 401, 403, 404, 409, 429),
      },
      RATE_LIMIT_HEADERS,
    );

    // The two routes that hand out a key: collecting it (once), and rotating it.
    const handOuts = [
      {
        url: BASE,
        operationId: 'collectApplicationKey',
        summary: "Collect your approved application's key",
        description:
          "The application's key, made on approval, collected once by the application's owner: the service keeps " +
          'only its hash, so a second call is a 409; a lost key is replaced by rotating it. Exchange the key for ' +
          'tokens at POST /auth/token. Keys are managed with the portal session or an identity token (no grants); ' +
          'a token that carries grants is refused (403 IDENTITY_REQUIRED).',
        handOut: keys.collect,
      },
      {
        url: `${BASE}/rotate`,
        operationId: 'rotateApplicationKey',
        summary: "Rotate your approved application's key",
        description:
          'Ends the current key (collected or not, or already revoked) and every token made from it, and returns ' +
          "a new key, shown this once. The application's owner only, with the portal session or an identity token.",
        handOut: keys.rotate,
      },
    ];
    for (const { url, handOut, ...doc } of handOuts) {
      app.post(
        url,
        {
          onRequest: app.requireGrant(undefined, { session: true, identity: true }),
          config: handsOutSecret,
          schema: { tags: TAGS, ...doc, security, params: ApplicationParams, response: keyAnswer },
        },
        async (request, reply) => {
          const { key, status } = await handOut(principalOf(request).owner, request.params.id);
          reply.header('cache-control', NO_STORE);
          return { key, status: keyStatusWire(status) };
        },
      );
    }

    app.post(
      `${BASE}/revoke`,
      {
        onRequest: app.requireGrant(undefined, { session: true, identity: true }),
        config: { workCost: WorkCost.write },
        schema: {
          tags: TAGS,
          operationId: 'revokeApplicationKey',
          summary: "Revoke your approved application's key",
          description:
            'Ends the current key and every token made from it (they answer 401 from then on); the application ' +
            "stays approved, and rotating makes a new key. The application's owner only, with the portal session or an " +
            'identity token.',
          security,
          params: ApplicationParams,
          response: { 200: responseDoc(KeyStatusSchema), ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (request) => keyStatusWire(await keys.revoke(principalOf(request).owner, request.params.id)),
    );

    app.post(
      '/auth/token',
      {
        config: { addressLimitPerMinute: rateLimitPerMinute },
        schema: {
          tags: ['Auth'],
          operationId: 'exchangeKey',
          summary: 'Exchange an application key for a token',
          description:
            "Returns a token carrying the approved application's grants, for its owner, as often as needed (the " +
            'OAuth 2.0 client-credentials way): a bot keeps its key and asks for a token when it starts or when its ' +
            'token expires (or refreshes the token at POST /auth/refresh). A key that was never issued, was rotated ' +
            'or revoked, or whose application was revoked: 401. Limited per client address (RateLimit policy "address").',
          security: [],
          body: TokenRequestSchema,
          response: withHeaders(
            {
              200: responseDoc(TokenPairSchema, { description: 'A new token.', headers: NO_STORE_HEADERS }),
              ...errorResponses(400, 401, 413, 415, 429, 500, 503),
            },
            RATE_LIMIT_HEADERS,
          ),
        },
      },
      async (request, reply) => {
        const issued = await keys.exchange(request.body.key).catch((error: unknown) => {
          throw withHint(error, wayIn);
        });
        reply.header('cache-control', NO_STORE);
        return tokenPairOf(issued);
      },
    );
  };
