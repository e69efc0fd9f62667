import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Type } from 'typebox';
import { errorAnchor } from './error-response.js';
import { type ErrorKind, errorCatalogue } from './errors.js';

const TITLE = 'Player Data Service';
const SUMMARY =
  "Minecraft players' data from the Hypixel network, served from a cache kept honest, with the service's " +
  'own player records, ping history, Discord users and a developer programme.';

function catalogueMarkdown(catalogue: readonly ErrorKind[]): string {
  const rows = catalogue.map((kind) => `| ${kind.code} | ${kind.name} | ${kind.status} | ${kind.reason} |`);
  return [
    '## Errors',
    'Every error answers an `ErrorResponse`; each `extra[]` entry names one problem by a stable code and name:',
    '',
    '| code | name | usual HTTP status | meaning |',
    '|---|---|---|---|',
    ...rows,
  ].join('\n');
}

/**
 * The OpenAPI 3.1 document (generated from the route schemas), `/openapi.json`, an interactive explorer
 * at `/docs/ui`, and `/docs`: a plain page listing the endpoints and the error catalogue, with an anchor
 * per error that ErrorResponse's `documentation` links to. Everything is served from the package: offline.
 * Register before the routes so that it sees them.
 */
export const httpDocs = fp(async (app: FastifyInstance) => {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: TITLE,
        version: '4.0.0',
        description: `${SUMMARY}\n\n${catalogueMarkdown(errorCatalogue)}`,
      },
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      },
    },
    refResolver: {
      buildLocalReference: (json, _base, _fragment, index) => String(json.$id ?? `def-${index}`),
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs/ui', uiConfig: { deepLinking: true } });

  app.get(
    '/openapi.json',
    {
      schema: {
        tags: ['Operations'],
        operationId: 'getOpenApiDocument',
        summary: 'This OpenAPI document',
        response: { 200: Type.Object({}, { additionalProperties: true }) },
      },
    },
    async () => app.swagger(),
  );

  let page: string | undefined;
  app.get(
    '/docs',
    {
      schema: {
        tags: ['Operations'],
        operationId: 'getDocsPage',
        summary: 'The documentation page: endpoints and the error catalogue',
        produces: ['text/html'],
        response: { 200: Type.String({ description: 'An HTML page.' }) },
      },
    },
    async (_request, reply) => {
      page ??= docsPage(app.swagger() as OpenApiDocument);
      return reply.type('text/html; charset=utf-8').send(page);
    },
  );
});

interface OpenApiDocument {
  paths?: Record<string, Record<string, { summary?: string; tags?: string[]; security?: unknown[] }>>;
}

function docsPage(document: OpenApiDocument): string {
  const endpoints = Object.entries(document.paths ?? {}).flatMap(([path, operations]) =>
    Object.entries(operations).map(
      ([method, operation]) =>
        `<tr><td><code>${method.toUpperCase()}</code></td><td><code>${escapeHtml(path)}</code></td>` +
        `<td>${escapeHtml(operation.summary ?? '')}</td><td>${operation.security?.length ? 'Bearer token' : 'public'}</td></tr>`,
    ),
  );
  const errors = errorCatalogue.map(
    (kind) =>
      `<tr id="${errorAnchor(kind.name)}"><td>${kind.code}</td><td><code>${kind.name}</code></td>` +
      `<td>${kind.status}</td><td>${escapeHtml(kind.reason)}</td></tr>`,
  );
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${TITLE}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.3rem .5rem;text-align:left;vertical-align:top}
tr:target{background:#fff3c4}code{font-size:.95em}</style></head>
<body><h1>${TITLE} <small>API 4.0</small></h1><p>${escapeHtml(SUMMARY)}</p>
<p>The machine-readable description is <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1);
try the endpoints in the <a href="/docs/ui">interactive explorer</a>.</p>
<h2 id="endpoints">Endpoints</h2>
<table><thead><tr><th>method</th><th>path</th><th>what</th><th>auth</th></tr></thead><tbody>
${endpoints.join('\n')}
</tbody></table>
<h2 id="errors">Errors</h2>
<p>Every error is answered with an <code>ErrorResponse</code>: <code>{success: false, code, cause, documentation, msTime, extra}</code>,
where <code>code</code> is the HTTP status, <code>msTime</code> the server's epoch milliseconds, and each <code>extra[]</code> entry one problem:
a stable <code>code</code> and <code>name</code> from the catalogue below, a <code>reason</code> safe to show an end user and a
<code>developer_reason</code> that says what to fix. Player and profile lookups report upstream failures in their own result shape.</p>
<table><thead><tr><th>code</th><th>name</th><th>usual HTTP status</th><th>meaning</th></tr></thead><tbody>
${errors.join('\n')}
</tbody></table>
</body></html>
`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
