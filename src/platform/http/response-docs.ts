import type { TSchema } from 'typebox';

/**
 * How a route documents its answers: one entry per status of its `response` schema, in the form Fastify and
 * @fastify/swagger both read, `{ description, headers, content: { <media type>: { schema } } }`. The
 * schemas are the OpenAPI document only (the app serializes with its own serializer), so nothing but the
 * tests (test/helpers/openapi-conformance.ts) keeps them true: declare every status and header a route
 * really answers with.
 */

/** A response header: its meaning, its value's JSON schema (header values are text: `integer` means digits). */
export interface HeaderDoc {
  readonly description: string;
  readonly schema: Readonly<Record<string, unknown>>;
  /** Present on every answer of the status it is declared for; otherwise only on some. */
  readonly required?: boolean;
}

export type HeaderDocs = Readonly<Record<string, HeaderDoc>>;

/**
 * @fastify/swagger renders a declared header as `{ description, schema }` and nothing else, so a header's
 * `required` rides in its schema under this key; the document's final pass (http-docs.ts) lifts it out.
 */
export const REQUIRED_HEADER_KEY = 'x-required';

/** A header as @fastify/swagger reads it from a response entry: its schema, with its description beside. */
type RenderedHeader = Readonly<Record<string, unknown>>;

export interface ResponseDoc<S extends TSchema = TSchema> {
  readonly description: string;
  readonly headers?: Readonly<Record<string, RenderedHeader>>;
  readonly content: Readonly<Record<string, { readonly schema: S }>>;
}

export interface ResponseDocOptions {
  /** What this answer means; the schema's description when not given. */
  readonly description?: string;
  readonly headers?: HeaderDocs;
  /** The body's media type; `application/json` unless given. */
  readonly mediaType?: string;
}

function renderHeaders(headers: HeaderDocs): Record<string, RenderedHeader> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, header]) => [
      name,
      {
        ...header.schema,
        description: header.description,
        ...(header.required ? { [REQUIRED_HEADER_KEY]: true } : {}),
      },
    ]),
  );
}

/** One status of a route's `response`: the body's schema, its description and its headers. */
export function responseDoc<S extends TSchema>(schema: S, options: ResponseDocOptions = {}): ResponseDoc<S> {
  const description = options.description ?? (schema as { description?: string }).description;
  if (!description) throw new TypeError('A documented response needs a description');
  return {
    description,
    ...(options.headers && Object.keys(options.headers).length > 0
      ? { headers: renderHeaders(options.headers) }
      : {}),
    content: { [options.mediaType ?? 'application/json']: { schema } },
  };
}

/**
 * An answer without a body (`type: 'null'`, which @fastify/swagger documents without content), with its
 * headers.
 */
export function emptyDoc(description: string, headers: HeaderDocs = {}) {
  return {
    description,
    type: 'null',
    ...(Object.keys(headers).length > 0 ? { headers: renderHeaders(headers) } : {}),
  } as const;
}

/** A redirect: no body, a `Location`, and the given headers. */
export const redirectDoc = (description: string, headers: HeaderDocs = {}) =>
  emptyDoc(description, {
    Location: { description: 'Where the browser goes next.', schema: { type: 'string' }, required: true },
    ...headers,
  });

/** The same responses, each with `headers` added: over its own (`win`), or under them. */
function addHeaders<R extends Readonly<Record<number, ResponseDoc>>>(
  responses: R,
  headers: HeaderDocs,
  win: boolean,
): R {
  const rendered = renderHeaders(headers);
  return Object.fromEntries(
    Object.entries(responses).map(([status, response]) => [
      status,
      {
        ...response,
        headers: win ? { ...response.headers, ...rendered } : { ...rendered, ...response.headers },
      },
    ]),
  ) as R;
}

/** The same responses, each also declaring `headers` (the headers every answer of a route may carry). */
export const withHeaders = <R extends Readonly<Record<number, ResponseDoc>>>(
  responses: R,
  headers: HeaderDocs,
): R => addHeaders(responses, headers, true);

/** The same responses, each also declaring those of `headers` it does not declare itself. */
export const withDefaultHeaders = <R extends Readonly<Record<number, ResponseDoc>>>(
  responses: R,
  headers: HeaderDocs,
): R => addHeaders(responses, headers, false);

const SECONDS = { type: 'integer', minimum: 0 } as const;

/** `Retry-After` in seconds (never an HTTP date). */
export const retryAfterHeader = (required: boolean, description: string): HeaderDocs => ({
  'Retry-After': { description, schema: { ...SECONDS, minimum: 1 }, required },
});

/** `Cache-Control: no-store`: on every error and every failure, which no cache may keep. */
export const NO_STORE_HEADERS: HeaderDocs = {
  'Cache-Control': {
    description: 'Errors and failures are never kept by a cache.',
    schema: { type: 'string', enum: ['no-store'] },
    required: true,
  },
};

/** The headers of a value served from the cache (platform/http/cache-headers.ts). */
export const CACHED_VALUE_HEADERS: HeaderDocs = {
  'X-Cache': {
    description:
      'Where the answer came from: HIT (a fresh copy from the cache), MISS (fetched now from the upstream) or ' +
      'STALE (an older copy standing in while the upstream fails).',
    schema: { type: 'string', enum: ['HIT', 'MISS', 'STALE'] },
    required: true,
  },
  Age: {
    description: 'Seconds since the copy was fetched from the upstream.',
    schema: SECONDS,
    required: true,
  },
  'Cache-Control': {
    description:
      '`private, max-age=<seconds the copy stays fresh>` (0 for a stale copy): a client may keep it that long.',
    schema: { type: 'string', pattern: '^private, max-age=[0-9]+$', example: 'private, max-age=60' },
    required: true,
  },
};

/**
 * `Vary` as the service writes it, when CORS is off: `Accept-Encoding` alone. With CORS_ORIGINS set, every
 * answer varies by `Origin` first (http-docs.ts words the document so).
 */
const VARY_SCHEMA = { type: 'string', pattern: '^[Aa]ccept-[Ee]ncoding$' } as const;

const CONTENT_ENCODING: HeaderDoc = {
  description:
    '`br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent ' +
    'otherwise.',
  schema: { type: 'string', enum: ['br', 'gzip'] },
};

const VARY_ACCEPT_ENCODING: HeaderDoc = {
  description: 'Accept-Encoding: the answer is compressed when the request accepts it.',
  schema: VARY_SCHEMA,
  required: true,
};

/** The headers of an answer that may be compressed (by the route itself: a cached value, a stored body). */
export const COMPRESSED_HEADERS: HeaderDocs = {
  Vary: VARY_ACCEPT_ENCODING,
  'Content-Encoding': CONTENT_ENCODING,
};

/**
 * The headers @fastify/compress adds to an answer it compresses: any answer of a route that does not say
 * `compress: false`, errors included (http-docs.ts declares them on each).
 */
export const COMPRESSIBLE_HEADERS: HeaderDocs = {
  Vary: {
    description: 'Accept-Encoding, on an answer compressed (`Content-Encoding`).',
    schema: VARY_SCHEMA,
  },
  'Content-Encoding': CONTENT_ENCODING,
};

/** `ETag` of an answer kept as bytes (platform/http/stored-body.ts). */
export const ETAG_HEADERS: HeaderDocs = {
  ETag: {
    description:
      'Names this version of the answer (with `-br` or `-gzip` for a compressed copy): sent back in ' +
      '`If-None-Match`, it gets a 304 while the answer is unchanged.',
    schema: { type: 'string', pattern: '^"[^"]+"$' },
    required: true,
  },
};

/** An answer the client already has (`If-None-Match` named its ETag): the ETag and Vary of the 200, no body. */
export const NOT_MODIFIED = emptyDoc(
  'The client already has this version (`If-None-Match` named its `ETag`): no body.',
  { ...ETAG_HEADERS, Vary: VARY_ACCEPT_ENCODING },
);
