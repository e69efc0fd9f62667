/*
 * The docs page's examples, made from the OpenAPI document's own: an operation's example URL and curl
 * command, and the first call a bot makes (curl and TypeScript).
 */

export interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  example?: unknown;
  schema?: { example?: unknown; anyOf?: { example?: unknown }[] };
}

export interface OpenApiOperation {
  operationId?: string;
  summary?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { example?: unknown }> };
}

export interface OpenApiDocument {
  tags?: { name: string; description?: string }[];
  paths?: Record<string, Record<string, OpenApiOperation>>;
}

export interface Endpoint {
  readonly method: string;
  readonly path: string;
  readonly operation: OpenApiOperation;
}

const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/** A parameter's example value, from the parameter or its schema; undefined when the document gives none. */
function exampleOf(parameter: Parameter): unknown {
  return parameter.example ?? parameter.schema?.example ?? parameter.schema?.anyOf?.[0]?.example;
}

/** The URL of an operation with the document's examples in its path and required query parameters. */
export function exampleUrl(path: string, parameters: readonly Parameter[] = []): string {
  const inPath = path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const parameter = parameters.find((candidate) => candidate.in === 'path' && candidate.name === name);
    const example = parameter && exampleOf(parameter);
    return example === undefined
      ? `$${name.replace(/[^A-Za-z0-9]/g, '_').toUpperCase()}`
      : encodeURIComponent(String(example));
  });
  const query = parameters
    .filter((parameter) => parameter.in === 'query' && parameter.required)
    .map(
      (parameter) =>
        `${encodeURIComponent(parameter.name)}=${encodeURIComponent(String(exampleOf(parameter) ?? ''))}`,
    );
  return query.length ? `${inPath}?${query.join('&')}` : inPath;
}

/** The example request of an operation as a curl command: its URL, its token, and its body's example. */
export function curlOf({ method, path, operation }: Endpoint): string {
  const lines = [
    `curl${method === 'get' ? '' : ` -X ${method.toUpperCase()}`} "$PDS_URL${exampleUrl(path, operation.parameters)}"`,
  ];
  if (operation.security?.some((requirement) => 'bearerAuth' in requirement))
    lines.push(`-H "Authorization: Bearer $PDS_TOKEN"`);
  else if (operation.security?.some((requirement) => 'metricsToken' in requirement))
    lines.push(`-H "Authorization: Bearer $METRICS_TOKEN"`);
  const body = operation.requestBody?.content?.['application/json']?.example;
  if (body !== undefined)
    lines.push(`-H 'Content-Type: application/json'`, `-d ${shellQuote(JSON.stringify(body))}`);
  return lines.join(' \\\n  ');
}

/** The first call, in curl and in TypeScript: a key exchanged for a token, then a player read with it. */
export function firstCallHtml(document: OpenApiDocument, base: string): string {
  const player = Object.entries(document.paths ?? {})
    .flatMap(([path, operations]) =>
      Object.entries(operations).map(([method, operation]) => ({ method, path, operation })),
    )
    .find(({ operation }) => operation.operationId === 'getPlayer');
  const playerUrl = player ? exampleUrl(player.path, player.operation.parameters) : '/player/Minikloon';
  const curl = `export PDS_URL=${shellQuote(base)}
export PDS_KEY='pds_...'   # your application's key, from the portal

# 1. Exchange the key for a token (again whenever the token expires); jq picks it out of the answer.
export PDS_TOKEN=$(curl -s -X POST "$PDS_URL/auth/token" \\
  -H 'Content-Type: application/json' -d "{\\"key\\": \\"$PDS_KEY\\"}" | jq -r .token)

# 2. The first call: a player, with the token.
curl "$PDS_URL${playerUrl}" -H "Authorization: Bearer $PDS_TOKEN"`;
  const typescript = `const base = process.env.PDS_URL ?? ${JSON.stringify(base)};

/**
 * A failed request's answer: an ErrorResponse (${base}/docs#errors), or, for a player or profiles lookup
 * the upstream failed, the lookup's own shape ({success: false, cause, throttle}).
 */
interface Failure {
  documentation?: string;
  extra?: { code: number; name: string; reason: string; developer_reason: string }[];
  cause?: string;
  throttle?: boolean;
}

async function call<T>(path: string, init: RequestInit = {}): Promise<T> {
  const reply = await fetch(\`\${base}\${path}\`, init);
  if (!reply.ok) {
    const failure = (await reply.json()) as Failure;
    const [first] = failure.extra ?? [];
    throw new Error(
      first
        ? \`\${reply.status} \${first.name}: \${first.developer_reason} (see \${failure.documentation})\`
        : \`\${reply.status}: \${failure.cause}\${failure.throttle ? ' (throttled: retry after Retry-After)' : ''}\`,
    );
  }
  return (await reply.json()) as T;
}

// 1. Exchange the application's key for a token (again whenever it expires).
const { token } = await call<{ token: string }>('/auth/token', {
  method: 'POST',
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify({ key: process.env.PDS_KEY }),
});

// 2. The first call: a player, with the token.
const player = await call('${playerUrl}', { headers: { Authorization: \`Bearer \${token}\` } });
console.log(player);`;
  return `<h2 id="first-call">Your first call</h2>
<p>With the key of an approved application (above), a bot exchanges it for a token and calls the service with it.
Discord IDs in answers are 64-bit integers: read them as text or big integers (see the 64-bit note in
<a href="/openapi.json">the document</a>'s description). Every failure is an <a href="#errors">ErrorResponse</a>
whose <code>documentation</code> links to the error's row below, except a player or profiles lookup that the upstream
failed or found nothing for: that answers the lookup's own shape, <code>{success: false, cause, throttle}</code>.</p>
<h3 id="first-call-curl">curl</h3>
<pre><code>${escapeHtml(curl)}</code></pre>
<h3 id="first-call-typescript">TypeScript (Node 20+, <code>fetch</code>)</h3>
<pre><code>${escapeHtml(typescript)}</code></pre>`;
}

/** Text made safe inside HTML. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
