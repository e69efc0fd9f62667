import swagger, { type FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifySchema } from 'fastify';
import fp from 'fastify-plugin';
import { Type } from 'typebox';
import { GRANT_OPENS, GRANTS, isOperatorGrant } from '../auth/grants.js';
import { guardOf } from '../auth/route-guard.js';
import { errorResponses } from '../error-response.js';
import { type ErrorKind, errorCatalogue } from '../errors.js';
import { showOpenApiForms } from '../openapi-form.js';
import { API_VERSION } from '../request-context.js';
import { SNOWFLAKE_NOTE } from '../snowflake.js';
import { EXPOSED_HEADERS } from './cors.js';
import { docsPage, type OpenApiDocument, SUMMARY, TITLE } from './docs-page.js';
import { EXPLORER_EXACT_IDS_JS } from './explorer-exact-ids.js';
import { fixedBody } from './fixed-body.js';
import { RATE_LIMIT_HEADERS } from './rate-limit-headers.js';
import {
  COMPRESSED_HEADERS,
  COMPRESSIBLE_HEADERS,
  ETAG_HEADERS,
  NOT_MODIFIED,
  REQUIRED_HEADER_KEY,
  type ResponseDoc,
  responseDoc,
  withDefaultHeaders,
  withHeaders,
} from './response-docs.js';

/** The error catalogue as a Markdown table, with how to fix each error. */
function catalogueMarkdown(catalogue: readonly ErrorKind[]): string {
  const cell = (text: string) => text.replace(/\|/g, '\\|');
  const rows = catalogue.map(
    (kind) => `| ${kind.code} | ${kind.name} | ${kind.status} | ${cell(kind.reason)} | ${cell(kind.fix)} |`,
  );
  return [
    'Every error answers an `ErrorResponse`; each `extra[]` entry names one problem by a stable code and name ' +
      '(the catalogue, also at [/docs#errors](/docs#errors)):',
    '',
    '| code | name | usual HTTP status | meaning | how to fix |',
    '|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

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

/** Headers every answer carries, errors included (platform/request-context.ts), as components.headers. */
const PLATFORM_HEADERS = {
  'API-Version': {
    description: 'The version of the API that answered.',
    required: true,
    schema: { type: 'string' as const, enum: [API_VERSION] },
  },
  'X-Request-Id': {
    description:
      "The request's id, in the log line of the request too: the client's own `X-Request-Id` when it is sane " +
      '(1 to 128 of `A-Za-z0-9._:-`), otherwise a new UUID.',
    required: true,
    schema: { type: 'string' as const, pattern: '^[A-Za-z0-9._:-]{1,128}$' },
  },
};

/**
 * With CORS_ORIGINS set (platform/http/cors.ts), every answer to a listed origin says so, as
 * components.headers on every response.
 */
const CORS_HEADERS = {
  'Access-Control-Allow-Origin': {
    description:
      "The request's `Origin` when CORS_ORIGINS lists it (`*` when it allows any origin): a browser script of that " +
      'origin may read the answer. Absent for a request from no origin, or from one not listed.',
    schema: { type: 'string' as const },
  },
  'Access-Control-Expose-Headers': {
    description:
      'The response headers a browser script may read beyond the CORS-safelisted ones; beside Access-Control-Allow-Origin.',
    schema: { type: 'string' as const, enum: [EXPOSED_HEADERS.join(', ')] },
  },
};

/**
 * With CORS_ORIGINS set every answer varies by `Origin` (@fastify/cors writes it first), and by
 * `Accept-Encoding` after it when the answer may come compressed: a response's `Vary`, as it reads then.
 */
function corsVary(declared: unknown): Json {
  const also =
    isObject(declared) && typeof declared.description === 'string' ? `; then ${declared.description}` : '';
  return {
    description: `Origin: answers differ by the request's origin (CORS)${also}`,
    required: true,
    schema: { type: 'string', pattern: '^Origin(, [Aa]ccept-[Ee]ncoding)?$' },
  };
}

/**
 * Statuses any route can answer with an ErrorResponse: a body it was sent that is too large or not JSON
 * (any request may carry one, and it is read before the route looks at it), an unexpected error, the
 * database out, shutting down.
 */
const EVERY_ROUTE_ERRORS = [413, 415, 500, 503] as const;

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null;

/**
 * Per route, before rendering: a route that documents its answers gets the ErrorResponses every route can
 * answer with (413, 415, 500, 503), unless it declares those statuses itself. A route that takes a token
 * also answers 429 when its owner's work budget is used up, and its answers carry the RateLimit headers.
 */
function withEveryRouteErrors(schema: Json): Json {
  if (!isObject(schema.response)) return schema;
  const secured = Array.isArray(schema.security) && schema.security.length > 0;
  const response: Json = {
    ...errorResponses(...EVERY_ROUTE_ERRORS, ...(secured ? ([429] as const) : [])),
    ...schema.response,
  };
  return {
    ...schema,
    response: secured
      ? withHeaders(response as Readonly<Record<number, ResponseDoc>>, RATE_LIMIT_HEADERS)
      : response,
  };
}

/**
 * The answers of a route that does not say `compress: false` go through @fastify/compress, errors included:
 * any of them may come compressed, with `Content-Encoding` and `Vary`. Declared on each, beside the headers
 * the route declares (which win: a route that compresses by itself says how).
 */
function withCompressibleHeaders(schema: Json): Json {
  if (!isObject(schema.response)) return schema;
  const responses = schema.response as Readonly<Record<number, ResponseDoc>>;
  return { ...schema, response: withDefaultHeaders(responses, COMPRESSIBLE_HEADERS) };
}

interface RouteHooks {
  readonly onRequest?: unknown;
  readonly preHandler?: unknown;
  readonly compress?: unknown;
}

/**
 * A route's security with its guard's grant as the scope of every bearer requirement: the document's scopes
 * come from the guard that checks them (route-guard.ts), never from a second list.
 */
function withGuardScopes(schema: Json, route: RouteHooks | undefined): Json {
  if (!Array.isArray(schema.security)) return schema;
  const guard = route && guardOf(route.onRequest, route.preHandler);
  if (!guard) return schema;
  const scopes = guard.grant ? [guard.grant] : [];
  return {
    ...schema,
    security: schema.security.map((requirement: Record<string, string[]>) =>
      'bearerAuth' in requirement ? { ...requirement, bearerAuth: scopes } : requirement,
    ),
  };
}

/** Each route's schema as the document shows it: its scopes, the errors and headers every route has. */
function documentedRoute({ schema, url, route }: { schema: FastifySchema; url: string; route?: RouteHooks }) {
  if (!isObject(schema) || schema.hide) return { schema, url };
  const complete = withEveryRouteErrors(withGuardScopes(schema, route));
  return {
    schema: route?.compress === false ? complete : withCompressibleHeaders(complete),
    url,
  };
}

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

/** Every operation of a rendered document. */
function* operationsOf(document: Json): Generator<Json> {
  for (const pathItem of Object.values(isObject(document.paths) ? document.paths : {})) {
    for (const operation of Object.values(isObject(pathItem) ? pathItem : {})) {
      if (isObject(operation)) yield operation;
    }
  }
}

/**
 * The rendered document's last pass: each response header's `required` is lifted out of its schema (where
 * it rode through @fastify/swagger), every response gets the platform's headers by reference (and the CORS
 * ones, with its `Vary` as CORS makes it, when `cors`), and the security schemes no operation uses
 * (metricsToken, on an instance without METRICS_TOKEN) are left out.
 */
function finishDocument(document: Json, cors: boolean): Json {
  const platformRefs = Object.fromEntries(
    Object.keys({ ...PLATFORM_HEADERS, ...(cors ? CORS_HEADERS : {}) }).map((name) => [
      name,
      { $ref: `#/components/headers/${name}` },
    ]),
  );
  const usedSchemes = new Set<string>();
  for (const operation of operationsOf(document)) {
    if (Array.isArray(operation.security)) {
      for (const requirement of operation.security)
        for (const name of Object.keys(requirement)) usedSchemes.add(name);
    }
    for (const response of Object.values(isObject(operation.responses) ? operation.responses : {})) {
      if (!isObject(response)) continue;
      const headers = isObject(response.headers) ? response.headers : {};
      for (const header of Object.values(headers)) {
        if (!isObject(header) || !isObject(header.schema)) continue;
        const { [REQUIRED_HEADER_KEY]: required, ...schema } = header.schema;
        header.schema = schema;
        if (required === true) header.required = true;
      }
      if (cors) headers.Vary = corsVary(headers.Vary);
      response.headers = { ...platformRefs, ...headers };
    }
  }
  const { components } = document;
  const errorResponse =
    isObject(components) && isObject(components.schemas) && components.schemas.ErrorResponse;
  if (isObject(errorResponse)) {
    errorResponse.description = `${String(errorResponse.description ?? '')}\n\n${catalogueMarkdown(errorCatalogue)}`;
  }
  if (isObject(components) && isObject(components.securitySchemes)) {
    components.securitySchemes = Object.fromEntries(
      Object.entries(components.securitySchemes).filter(([name]) => usedSchemes.has(name)),
    );
  }
  return document;
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
 * (API-Version, X-Request-Id); every route that documents its answers can also answer 413, 415, 500, 503.
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
