import { DEVELOPER_GRANTS, GRANT_OPENS, type Grant, OPERATOR_GRANTS } from '../auth/grants.js';
import { errorAnchor } from '../error-response.js';
import { errorCatalogue } from '../errors.js';
import {
  curlOf,
  type Endpoint,
  escapeHtml,
  firstCallHtml,
  type OpenApiDocument,
  type OpenApiOperation,
} from './docs-examples.js';

/**
 * The documentation page (`/docs`): getting started (a deployment's section on getting a token, then the
 * first call in curl and in TypeScript), every endpoint of the OpenAPI document with its grant and an example
 * request made from the document's own examples (so that the page cannot drift from it), the grants, the
 * limits, and last the error catalogue with how to fix each error and an anchor per error.
 */

export const TITLE = 'Player Data Service';
export const SUMMARY =
  "Minecraft players' data from the Hypixel network, served from a cache kept honest, with the service's " +
  'own player records, ping history, Discord users and a developer programme.';

/** The page's icon, inline: the browser asks for no /favicon.ico. */
export const FAVICON_HREF = `data:image/svg+xml,${encodeURIComponent(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#2e7d32"/>' +
    '<path d="M4 4h5a3 3 0 0 1 0 6H6v2H4z" fill="#fff"/></svg>',
)}`;

export interface DocsPageOptions {
  /** The deployment's section on getting a token (HTML, with its own heading `#getting-a-token`). */
  readonly gettingStarted: string;
  /** Where clients reach the service (PUBLIC_URL), for the examples; a local address when not set. */
  readonly publicUrl?: string | undefined;
}

/** Every operation of the document, grouped by its tag in the document's order of tags. */
function endpointsByTag(document: OpenApiDocument): [string, string, Endpoint[]][] {
  const endpoints = Object.entries(document.paths ?? {}).flatMap(([path, operations]) =>
    Object.entries(operations).map(([method, operation]) => ({ method, path, operation })),
  );
  const tags = [...(document.tags ?? [])];
  for (const { operation } of endpoints) {
    const tag = operation.tags?.[0] ?? 'Other';
    if (!tags.some(({ name }) => name === tag)) tags.push({ name: tag });
  }
  return tags
    .map(({ name, description }): [string, string, Endpoint[]] => [
      name,
      description ?? '',
      endpoints.filter(({ operation }) => (operation.tags?.[0] ?? 'Other') === name),
    ])
    .filter(([, , list]) => list.length > 0);
}

/** What an operation needs, from its security requirements: the grant is the bearer requirement's scope. */
export function accessOf(operation: OpenApiOperation): string {
  const requirements = operation.security ?? [];
  if (requirements.length === 0) return 'public: no token';
  const ways = requirements.map((requirement) => {
    if ('bearerAuth' in requirement) {
      const [grant] = requirement.bearerAuth ?? [];
      return grant
        ? `a token with the grant <code class="grant">${escapeHtml(grant)}</code>`
        : 'any token of yours (an identity token too)';
    }
    if ('sessionCookie' in requirement) return 'the developer portal’s sign-in session';
    if ('metricsToken' in requirement) return 'the deployment’s <code>METRICS_TOKEN</code>';
    return escapeHtml(Object.keys(requirement).join(' and '));
  });
  return ways.join(', or ');
}

const anchorOf = ({ method, path, operation }: Endpoint) =>
  `op-${operation.operationId ?? `${method}-${path.replace(/[^A-Za-z0-9]+/g, '-')}`}`;

function endpointHtml(endpoint: Endpoint): string {
  const { method, path, operation } = endpoint;
  return `<section class="op" id="${escapeHtml(anchorOf(endpoint))}">
<h4><code class="method">${method.toUpperCase()}</code> <code>${escapeHtml(path)}</code> <span>${escapeHtml(operation.summary ?? '')}</span></h4>
<p class="access">Needs ${accessOf(operation)}.${
    operation.operationId
      ? ` Try it in the <a href="/docs/ui/#/${escapeHtml(operation.tags?.[0] ?? '')}/${escapeHtml(operation.operationId)}">explorer</a>.`
      : ''
  }</p>
<pre><code>${escapeHtml(curlOf(endpoint))}</code></pre>
</section>`;
}

export function docsPage(document: OpenApiDocument, { gettingStarted, publicUrl }: DocsPageOptions): string {
  const base = publicUrl ?? 'http://localhost:3000';
  const groups = endpointsByTag(document).map(
    ([tag, description, endpoints]) =>
      `<h3 id="tag-${escapeHtml(tag)}">${escapeHtml(tag)}</h3>\n<p>${escapeHtml(description)}</p>\n${endpoints.map(endpointHtml).join('\n')}`,
  );
  const grantRow = (grant: Grant, tier: string) =>
    `<tr><td><code>${grant}</code></td><td>${tier}</td><td>${escapeHtml(GRANT_OPENS[grant])}</td></tr>`;
  const grants = [
    ...DEVELOPER_GRANTS.map((grant) => grantRow(grant, 'a developer application may ask for it')),
    ...OPERATOR_GRANTS.map((grant) => grantRow(grant, 'given only by an operator (command line)')),
  ];
  const errors = errorCatalogue.map(
    (kind) =>
      `<tr id="${errorAnchor(kind.name)}"><td>${kind.code}</td><td><code>${kind.name}</code></td>` +
      `<td>${kind.status}</td><td>${escapeHtml(kind.reason)}</td><td class="fix">${withCode(kind.fix)}</td></tr>`,
  );
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${TITLE}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" type="image/svg+xml" href="${FAVICON_HREF}">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:64rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.3rem .5rem;text-align:left;vertical-align:top}
tr:target,section:target{background:#fff3c4}code{font-size:.95em}
pre{background:#f5f5f5;padding:.6rem .8rem;overflow-x:auto;border-radius:4px}
.op{border-top:1px solid #e5e5e5;padding:.3rem 0}.op h4{margin:.4rem 0}.op h4 span{font-weight:normal}
.op .access{margin:.2rem 0}.method{font-weight:bold}code.grant{background:#e8f5e9;padding:0 .2rem}
nav ol{columns:2}</style></head>
<body><h1>${TITLE} <small>API 4.0</small></h1><p>${escapeHtml(SUMMARY)}</p>
<p>The machine-readable description is <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1);
try the endpoints in the <a href="/docs/ui/">interactive explorer</a>.</p>
<nav aria-label="Contents"><ol>
<li><a href="#getting-started">Getting started</a>: <a href="#getting-a-token">a token</a>, <a href="#first-call">the first call</a></li>
<li><a href="#endpoints">Endpoints</a>, each with its grant and an example</li>
<li><a href="#grants">Grants</a></li><li><a href="#limits">Limits</a></li>
<li><a href="#errors">Errors</a>, and how to fix each</li>
</ol></nav>
<h2 id="getting-started">Getting started</h2>
<ol><li>Get an application approved and collect its key (<a href="#getting-a-token">Getting a token</a>).</li>
<li>Exchange the key for a token at <code>POST /auth/token</code>, and send the token as <code>Authorization: Bearer &lt;token&gt;</code>.</li>
<li>Call the endpoints your application's grants open (<a href="#first-call">your first call</a>, <a href="#endpoints">every endpoint</a>).</li></ol>
${gettingStarted}
${firstCallHtml(document, base)}
<h2 id="endpoints">Endpoints</h2>
<p>Each endpoint with what it needs and an example request (from the examples of <a href="/openapi.json">the document</a>;
set <code>PDS_URL</code> and <code>PDS_TOKEN</code> as in <a href="#first-call">your first call</a>). A token must carry the grant an
endpoint names (403 <code>GRANT_MISSING</code> otherwise).</p>
${groups.join('\n')}
<h2 id="grants">Grants</h2>
<p>A token carries grants; each endpoint needs one (403 without it). A developer application may ask for the
developer grants; an operator grant in an application is refused (400 <code>OPERATOR_ONLY_GRANT</code>).
Whatever a token writes is its owner's, and reads show the owner its own.</p>
<table><thead><tr><th>grant</th><th>who gives it</th><th>opens</th></tr></thead><tbody>
${grants.join('\n')}
</tbody></table>
<h2 id="limits">Limits</h2>
<p>Each owner has a budget of the service's work in cost units (a cached read costs 1, a durable write 5,
a body a unit per KiB, a bulk read of players a unit per player, a ping history a unit per day, a ping batch a unit per sample, a page of interaction
logs a unit per 256 bytes), a number of requests in progress at once, and a share of the upstream key for
uncached player and profile lookups. Every answer says where the owner stands in
<code>RateLimit-Policy</code> and <code>RateLimit</code> (policies <code>"work"</code>, <code>"upstream"</code>,
<code>"address"</code>); beyond a limit, 429 with <code>Retry-After</code>. <code>GET /auth/me</code> says the same in JSON.</p>
<h2 id="errors">Errors</h2>
<p>Every error is answered with an <code>ErrorResponse</code>: <code>{success: false, code, cause, documentation, msTime, extra}</code>,
where <code>code</code> is the HTTP status, <code>msTime</code> the server's epoch milliseconds, and each <code>extra[]</code> entry one problem:
a stable <code>code</code> and <code>name</code> from the catalogue below, a <code>reason</code> safe to show an end user and a
<code>developer_reason</code> that says what to fix. Player and profile lookups report upstream failures in their own result shape.</p>
<table id="error-catalogue"><thead><tr><th>code</th><th>name</th><th>usual HTTP status</th><th>meaning</th><th>how to fix</th></tr></thead><tbody>
${errors.join('\n')}
</tbody></table>
</body></html>
`;
}

/** Escaped text with its `backticked` spans as code. */
function withCode(text: string): string {
  return escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');
}
