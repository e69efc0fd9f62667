import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { JoinedBody } from '../../src/platform/http/joined-body.js';

/**
 * Keeps the OpenAPI document true to what the service answers: every response an app built by the test
 * helpers sends is checked against the document that app serves, for its route, method and status (the
 * status declared at all, the declared `required` headers present, every declared header's value, no
 * header sent that is not declared but the transport's own, the content type declared, and a JSON body
 * valid against its schema). A test fails on any mismatch of the
 * responses it caused (build-test-app.ts asserts when the test ends).
 *
 * Not checked: routes under `/test/` (tests add their own), routes hidden from the document (the
 * explorer's), and answers of the not-found handler (404, 405: no route); raw answers of Node's
 * clientError handler never reach Fastify.
 */

/** One answer as the app sent it. */
export interface Exchange {
  readonly method: string;
  /** The route's URL as Fastify declares it (`/player/:player`). */
  readonly route: string;
  /** The request's URL, to name the answer in a report. */
  readonly url: string;
  readonly status: number;
  /** Response headers, by lower-case name. */
  readonly headers: Readonly<Record<string, unknown>>;
  /** The body as text (a JoinedBody's parts joined); undefined when it was streamed otherwise (not checked). */
  readonly body: string | undefined;
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null;

/** `/player/:player` -> `/player/{player}`, as @fastify/swagger writes paths. */
const toOpenApiPath = (route: string): string => route.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/** Every `$ref: "#/..."` made absolute in the document added to Ajv as `openapi`. */
function anchorRefs(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(anchorRefs);
  if (!isObject(schema)) return schema;
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [
      key,
      key === '$ref' && typeof value === 'string' && value.startsWith('#')
        ? `openapi${value}`
        : anchorRefs(value),
    ]),
  );
}

/** Ajv's errors in one line; `whole` names the value itself (the body), where no path points inside it. */
const describeErrors = (errors: readonly ErrorObject[] | null | undefined, whole = '(body) '): string =>
  (errors ?? [])
    .slice(0, 5)
    .map(
      (error) =>
        `${error.instancePath ? `${error.instancePath} ` : whole}${error.message ?? 'is invalid'}${paramsOf(error)}`,
    )
    .join('; ');

function paramsOf(error: ErrorObject): string {
  const { additionalProperty, missingProperty, allowedValues } = error.params as Record<string, unknown>;
  if (additionalProperty !== undefined) return ` (${String(additionalProperty)})`;
  if (missingProperty !== undefined) return ` (${String(missingProperty)})`;
  if (allowedValues !== undefined) return ` (${JSON.stringify(allowedValues)})`;
  return '';
}

/**
 * Headers of the transport rather than of the operation, which no document declares: the body's length and
 * framing, the connection's fate. Content-Type is checked against the declared media types.
 */
const TRANSPORT_HEADERS = new Set([
  'content-type',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'date',
]);

const isJsonMedia = (media: string): boolean => media === 'application/json' || media.endsWith('+json');

/** A document's verdict on exchanges: the ways each one differs from what the document declares. */
export class OpenApiConformance {
  private readonly bodies: Ajv2020;
  private readonly headerValues: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly document: Json) {
    // The generated document carries annotations (`example`, `x-reason`) Ajv does not know: not strict.
    this.bodies = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats.default(this.bodies);
    // 64-bit IDs (platform/snowflake.ts): parsed here by JSON.parse, exact only below 2^53, integers still.
    this.bodies.addFormat('uint64', {
      type: 'number',
      validate: (n: number) => Number.isInteger(n) && n >= 0,
    });
    this.bodies.addSchema(anchorRefs(document) as Json, 'openapi');
    // Header values are text: `integer` means digits.
    this.headerValues = new Ajv2020({ strict: false, coerceTypes: true, validateSchema: false });
    addFormats.default(this.headerValues);
  }

  /** What is wrong with `exchange`, one line each (none: it is as the document says). */
  check(exchange: Exchange): string[] {
    const method = exchange.method === 'HEAD' ? 'get' : exchange.method.toLowerCase();
    const path = toOpenApiPath(exchange.route);
    const pathItem = (this.document.paths as Json | undefined)?.[path];
    const operation = isObject(pathItem) ? pathItem[method] : undefined;
    if (!isObject(operation)) return [`${method.toUpperCase()} ${path} is not in the document`];
    const responses = isObject(operation.responses) ? operation.responses : {};
    const declared =
      responses[String(exchange.status)] ?? responses[`${String(exchange.status)[0]}XX`] ?? responses.default;
    const response = this.resolve(declared);
    if (!isObject(response)) {
      return [`status ${exchange.status} is not declared (declared: ${Object.keys(responses).join(', ')})`];
    }
    const pointer = `#/paths/${path.replaceAll('~', '~0').replaceAll('/', '~1')}/${method}/responses/${exchange.status}`;
    return [
      ...this.checkHeaders(response, exchange, pointer),
      ...(exchange.method === 'HEAD' ? [] : this.checkBody(response, exchange, pointer)),
    ];
  }

  private resolve(value: unknown): unknown {
    if (!isObject(value) || typeof value.$ref !== 'string') return value;
    let target: unknown = this.document;
    for (const segment of value.$ref.replace(/^#\//, '').split('/')) {
      target = isObject(target) ? target[segment.replaceAll('~1', '/').replaceAll('~0', '~')] : undefined;
    }
    return target;
  }

  private checkHeaders(response: Json, exchange: Exchange, pointer: string): string[] {
    const problems: string[] = [];
    const declaredHeaders = isObject(response.headers) ? response.headers : {};
    const names = new Set(Object.keys(declaredHeaders).map((name) => name.toLowerCase()));
    for (const name of Object.keys(exchange.headers)) {
      if (!names.has(name.toLowerCase()) && !TRANSPORT_HEADERS.has(name.toLowerCase()))
        problems.push(`header ${name} is not declared`);
    }
    for (const [name, declared] of Object.entries(declaredHeaders)) {
      const header = this.resolve(declared);
      if (!isObject(header)) continue;
      const value = exchange.headers[name.toLowerCase()];
      if (value === undefined) {
        if (header.required === true) problems.push(`required header ${name} is missing`);
        continue;
      }
      if (!isObject(header.schema)) continue;
      const validate = this.compile(this.headerValues, `${pointer}/headers/${name}`, header.schema);
      const text = Array.isArray(value) ? value.join(', ') : String(value);
      if (!validate(text))
        problems.push(`header ${name}: ${JSON.stringify(text)} ${describeErrors(validate.errors, '')}`);
    }
    return problems;
  }

  private checkBody(response: Json, exchange: Exchange, pointer: string): string[] {
    if (exchange.body === undefined) return [];
    const content = isObject(response.content) ? response.content : undefined;
    if (exchange.body.length === 0) {
      return content && exchange.status !== 204 && exchange.status !== 304
        ? [`empty body, but the document declares ${Object.keys(content).join(', ')}`]
        : [];
    }
    const contentType = String(exchange.headers['content-type'] ?? '');
    const media = contentType.split(';', 1)[0]?.trim().toLowerCase() ?? '';
    if (!content) return [`a ${media || 'typeless'} body, but the document declares none`];
    const [type] = media.split('/');
    const entry = content[media] ?? content[`${type}/*`] ?? content['*/*'];
    if (!isObject(entry)) {
      return [
        `content type ${contentType || '(none)'} is not declared (declared: ${Object.keys(content).join(', ')})`,
      ];
    }
    if (!isJsonMedia(media) || !isObject(entry.schema)) return [];
    let body: unknown;
    try {
      body = JSON.parse(exchange.body);
    } catch {
      return [`the body is not JSON: ${exchange.body.slice(0, 80)}`];
    }
    const validate = this.compile(this.bodies, `${pointer}/content/${media}`, entry.schema, anchorRefs);
    return validate(body) ? [] : [`body: ${describeErrors(validate.errors)}`];
  }

  private compile(
    ajv: Ajv2020,
    key: string,
    schema: Json,
    prepare: (schema: unknown) => unknown = (same) => same,
  ): ValidateFunction {
    const cacheKey = `${ajv === this.bodies ? 'body' : 'header'} ${key}`;
    let validate = this.compiled.get(cacheKey);
    if (!validate) {
      validate = ajv.compile(prepare(schema) as Json);
      this.compiled.set(cacheKey, validate);
    }
    return validate;
  }
}

/**
 * The verdicts of the documents seen in this process, by their text: the apps of a process mostly serve
 * the same document, and its validators are compiled once for all of them.
 */
const verdicts = new Map<string, OpenApiConformance>();

function conformanceTo(document: Json): OpenApiConformance {
  const text = JSON.stringify(document);
  let verdict = verdicts.get(text);
  if (!verdict) {
    verdict = new OpenApiConformance(document);
    verdicts.set(text, verdict);
  }
  return verdict;
}

/** The exchanges of one app and what is wrong with them, checked as they happen. */
export class ResponseConformance {
  private readonly found: string[] = [];
  private readonly hidden = new Set<string>();
  private readonly payloads = new WeakMap<FastifyRequest, unknown>();
  private verdict: OpenApiConformance | undefined;
  /** How many answers were checked against the document. */
  checked = 0;

  constructor(private readonly app: FastifyInstance) {
    app.addHook('onRoute', (route) => {
      if ((route.schema as { hide?: boolean } | undefined)?.hide) this.hidden.add(route.url);
    });
    app.addHook('onSend', async (request, _reply, payload) => {
      this.payloads.set(request, payload);
      return payload;
    });
    app.addHook('onResponse', async (request, reply) => this.record(request, reply));
  }

  /** The mismatches found so far, forgotten once taken. */
  take(): string[] {
    return this.found.splice(0);
  }

  /** Throws when an answer differed from the document (each mismatch is reported once). */
  assertConforms(): void {
    const found = this.take();
    if (found.length > 0) {
      throw new Error(
        `${found.length} response(s) differ from the OpenAPI document (/openapi.json):\n  ${found.join('\n  ')}`,
      );
    }
  }

  private record(request: FastifyRequest, reply: FastifyReply): void {
    const route = request.routeOptions.url;
    if (route === undefined || route.startsWith('/test/') || this.hidden.has(route)) return;
    const payload = this.payloads.get(request);
    const body =
      typeof payload === 'string'
        ? payload
        : Buffer.isBuffer(payload)
          ? decoded(payload, reply.getHeader('content-encoding')).toString('utf8')
          : payload instanceof JoinedBody
            ? Buffer.concat(payload.parts).toString('utf8')
            : payload == null
              ? ''
              : undefined;
    const exchange: Exchange = {
      method: request.method,
      route,
      url: request.url,
      status: reply.statusCode,
      headers: reply.getHeaders(),
      body,
    };
    let problems: string[];
    try {
      this.verdict ??= conformanceTo(this.app.swagger() as Json);
      problems = this.verdict.check(exchange);
    } catch (error) {
      problems = [`could not be checked: ${(error as Error).stack ?? String(error)}`];
    }
    this.checked++;
    for (const problem of problems)
      this.found.push(
        `${exchange.method} ${exchange.url} (route ${route}) answered ${exchange.status}: ${problem}`,
      );
  }
}

/** Published by Fastify as an instance is created (its documented diagnostics channel). */
const INITIALIZATION = 'fastify.initialization';

/**
 * Runs `build`, which must create its Fastify instance before its first `await` (buildApp does), and
 * watches the answers of that instance: the hooks are added as the instance is created, before any plugin,
 * so that they reach every route.
 */
export function watchConformance<T>(build: () => T): { built: T; conformance: ResponseConformance } {
  let conformance: ResponseConformance | undefined;
  const onInit = (message: unknown) => {
    conformance ??= new ResponseConformance((message as { fastify: FastifyInstance }).fastify);
  };
  subscribe(INITIALIZATION, onInit);
  let built: T;
  try {
    built = build();
  } finally {
    unsubscribe(INITIALIZATION, onInit);
  }
  if (!conformance)
    throw new Error('watchConformance: the build created no Fastify instance before its first await');
  return { built, conformance };
}

/** A body as it reads once its Content-Encoding (precompressed answers) is undone. */
function decoded(payload: Buffer, encoding: unknown): Buffer {
  if (encoding === 'br') return brotliDecompressSync(payload);
  if (encoding === 'gzip') return gunzipSync(payload);
  return payload;
}
