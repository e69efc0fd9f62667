import swagger, { type FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Type } from 'typebox';
import { GRANT_OPENS, GRANTS, isOperatorGrant } from '../auth/grants.js';
import { showOpenApiForms } from '../openapi-form.js';
import { SNOWFLAKE_NOTE } from '../snowflake.js';
import type { OpenApiDocument } from './docs-examples.js';
import { docsPage, SUMMARY, TITLE } from './docs-page.js';
import { EXPLORER_EXACT_IDS_JS } from './explorer-exact-ids.js';
import { CORS_HEADERS, finishDocument, PLATFORM_HEADERS } from './finish-document.js';
import { fixedBody } from './fixed-body.js';
import { COMPRESSED_HEADERS, ETAG_HEADERS, NOT_MODIFIED, responseDoc } from './response-docs.js';
import { documentedRoute, type Json } from './route-docs.js';

/**
 * Where the document's description sends a reader for errors: the catalogue itself is the ErrorResponse
 * schema's description, which the explorer shows after the operations, not above the first of them.
 */
const ERRORS_POINTER =
  '## Getting started and errors\n' +
  'How to get a token, the first call in curl and TypeScript, and every endpoint with its grant and an example: ' +
  '[/docs](/docs). The error catalogue, with how to fix each error: [/docs#errors](/docs#errors), and the ' +
  '`ErrorResponse` schema at the end of this document.';

export interface HttpDocsOptions {
  /** Where clients reach the service (PUBLIC_URL): the document's server. Relative (`/`) when undefined. */
  readonly publicUrl?: string | undefined;
  /** How to get a token: the bearer scheme's description (the explorer's Authorize box). */
  readonly bearerDescription?: string;
  /** The docs page's section on getting a token (HTML), in its getting started, before the endpoints. */
  readonly gettingStartedHtml?: string;
  /** CORS_ORIGINS is set (platform/http/cors.ts): every answer carries the CORS headers the document declares. */
  readonly cors?: boolean;
}

/** The operations' tags, one per operation, in the order the explorer and the docs page show them. */
const TAGS = [
  { name: 'Player', description: "Hypixel players' data, from the cache: one, many at once, their history." },
  { name: 'Gamemode', description: "A player's SkyBlock profiles." },
  { name: 'Ping', description: "Players' ping samples and their daily history." },
  {
    name: 'Messenger',
    description: "Your bot's interaction logs and its Discord users with their Minecraft accounts.",
  },
  { name: 'Developer', description: 'Developer applications (applying, reviewing) and their keys.' },
  {
    name: 'Auth',
    description: 'Tokens: exchanging a key, refreshing, who the caller is, signing in to the portal.',
  },
  { name: 'Operations', description: 'Health, readiness, metrics and this documentation.' },
];

/** How a bearer token's grants read as security scopes: the bearerAuth scheme's description. */
function scopesMarkdown(): string {
  return [
    'Every operation that takes a token names, as the scope of its `bearerAuth` requirement, the grant the ' +
      "token must carry (none: any token of the caller's). Grants are the token's `scope` claim:",
    '',
    '| scope | opens | given by |',
    '|---|---|---|',
    ...GRANTS.map(
      (grant) =>
        `| \`${grant}\` | ${GRANT_OPENS[grant]} | ${isOperatorGrant(grant) ? 'an operator only' : 'an approved application'} |`,
    ),
  ].join('\n');
}

/** The headers of a fixed body's 200 (fixed-body.ts): its ETag, compressed as the request accepts. */
const FIXED_BODY_HEADERS = { ...ETAG_HEADERS, ...COMPRESSED_HEADERS };

/**
 * The OpenAPI 3.1 document (generated from the route schemas), `/openapi.json`, an interactive explorer
 * at `/docs/ui` (its own routes hidden from the document), and `/docs`: a plain page listing the endpoints
 * and the error catalogue, with an anchor per error that ErrorResponse's `documentation` links to.
 * Everything is served from the package: offline. Register before the routes so that it sees them.
 *
 * Every operation states its `security` (`[]` when public). Every response carries the platform's headers
 * (API-Version, X-Request-Id); every route that documents its answers can also answer 400, 413, 415, 500, 503 (and 414 with a path parameter).
 */
export const httpDocs = fp(async (app: FastifyInstance, docs: HttpDocsOptions) => {
  const {
    publicUrl,
    bearerDescription = 'An access token of the service.',
    gettingStartedHtml = '',
    cors = false,
  } = docs;
  const options: FastifyDynamicSwaggerOptions = {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: TITLE,
        version: '4.0.0',
        description: `${SUMMARY}\n\n${ERRORS_POINTER}\n\n${SNOWFLAKE_NOTE}`,
      },
      tags: TAGS,
      // Relative when PUBLIC_URL is not set: clients resolve it against where they fetched the document.
      servers: [publicUrl ? { url: publicUrl, description: 'This deployment' } : { url: '/' }],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: `${bearerDescription}\n\n${scopesMarkdown()}`,
          },
          sessionCookie: {
            type: 'apiKey',
            in: 'cookie',
            name: 'pds_session',
            description:
              "The developer portal's sign-in session (set by `GET /auth/discord/callback`; HttpOnly). Every " +
              'state-changing request made with it carries the CSRF token of `GET /auth/session` in `X-CSRF-Token`. ' +
              'It opens only the portal’s routes (sessions, applications, keys, `/auth/me`), never the data routes.',
          },
          metricsToken: {
            type: 'http',
            scheme: 'bearer',
            description: 'The static METRICS_TOKEN of the deployment, for `GET /metrics` when one is set.',
          },
        },
        headers: { ...PLATFORM_HEADERS, ...(cors ? CORS_HEADERS : {}) },
      },
    },
    refResolver: {
      buildLocalReference: (json, _base, _fragment, index) => String(json.$id ?? `def-${index}`),
    },
    transform: documentedRoute,
    transformObject: (document) =>
      finishDocument(
        showOpenApiForms('openapiObject' in document ? document.openapiObject : {}) as Json,
        cors,
      ),
  };
  await app.register(swagger, options);
  await app.register(swaggerUi, {
    routePrefix: '/docs/ui',
    uiConfig: { deepLinking: true },
    theme: { js: [{ filename: 'exact-ids.js', content: EXPLORER_EXACT_IDS_JS }] },
  });

  // Both answers are fixed once the app is ready: made once, compressed once, 304 for a client that has them.
  const openApiBody = fixedBody('application/json; charset=utf-8', () => JSON.stringify(app.swagger()));
  app.get(
    '/openapi.json',
    {
      compress: false,
      schema: {
        tags: ['Operations'],
        operationId: 'getOpenApiDocument',
        summary: 'This OpenAPI document',
        security: [],
        response: {
          200: responseDoc(Type.Object({}, { additionalProperties: true }), {
            description: 'The OpenAPI 3.1 document of this service.',
            headers: FIXED_BODY_HEADERS,
          }),
          304: NOT_MODIFIED,
        },
      },
    },
    (request, reply) => openApiBody.send(request, reply),
  );

  const pageBody = fixedBody('text/html; charset=utf-8', () =>
    docsPage(app.swagger() as OpenApiDocument, { gettingStarted: gettingStartedHtml, publicUrl }),
  );
  app.get(
    '/docs',
    {
      compress: false,
      schema: {
        tags: ['Operations'],
        operationId: 'getDocsPage',
        summary: 'The documentation page: getting started, the endpoints, the error catalogue',
        security: [],
        response: {
          200: responseDoc(Type.String(), {
            description:
              'An HTML page: getting started, every endpoint with its grant and an example, and every error with its anchor and fix.',
            mediaType: 'text/html',
            headers: FIXED_BODY_HEADERS,
          }),
          304: NOT_MODIFIED,
        },
      },
    },
    (request, reply) => pageBody.send(request, reply),
  );
});
