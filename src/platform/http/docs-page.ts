import { DEVELOPER_GRANTS, GRANT_OPENS, type Grant, OPERATOR_GRANTS } from '../auth/grants.js';
import { errorAnchor } from '../error-response.js';
import { errorCatalogue } from '../errors.js';

/**
 * The documentation page (`/docs`): the endpoints of the OpenAPI document, the grants, the limits and the
 * error catalogue with an anchor per error, and a deployment's section on getting a token.
 */

export const TITLE = 'Player Data Service';
export const SUMMARY =
  "Minecraft players' data from the Hypixel network, served from a cache kept honest, with the service's " +
  'own player records, ping history, Discord users and a developer programme.';

export interface OpenApiDocument {
  paths?: Record<string, Record<string, { summary?: string; tags?: string[]; security?: unknown[] }>>;
}

export function docsPage(document: OpenApiDocument, gettingStarted: string): string {
  const endpoints = Object.entries(document.paths ?? {}).flatMap(([path, operations]) =>
    Object.entries(operations).map(
      ([method, operation]) =>
        `<tr><td><code>${method.toUpperCase()}</code></td><td><code>${escapeHtml(path)}</code></td>` +
        `<td>${escapeHtml(operation.summary ?? '')}</td><td>${operation.security?.length ? 'Bearer token' : 'public'}</td></tr>`,
    ),
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
${gettingStarted}
<h2 id="endpoints">Endpoints</h2>
<table><thead><tr><th>method</th><th>path</th><th>what</th><th>auth</th></tr></thead><tbody>
${endpoints.join('\n')}
</tbody></table>
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
<table><thead><tr><th>code</th><th>name</th><th>usual HTTP status</th><th>meaning</th></tr></thead><tbody>
${errors.join('\n')}
</tbody></table>
</body></html>
`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
