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
 * A redirect: no body (`type: 'null'`, which @fastify/swagger documents without content), a `Location`,
 * and the given headers.
 */
export function redirectDoc(description: string, headers: HeaderDocs = {}) {
  return {
    description,
    type: 'null',
    headers: renderHeaders({
      Location: { description: 'Where the browser goes next.', schema: { type: 'string' }, required: true },
      ...headers,
    }),
  } as const;
}

/** The same responses, each also declaring `headers` (the headers every answer of a route may carry). */
export function withHeaders<R extends Readonly<Record<number, ResponseDoc>>>(
  responses: R,
  headers: HeaderDocs,
): R {
  const rendered = renderHeaders(headers);
  return Object.fromEntries(
    Object.entries(responses).map(([status, response]) => [
      status,
      { ...response, headers: { ...response.headers, ...rendered } },
    ]),
  ) as R;
}

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

/** The headers of an answer that may be compressed. */
export const COMPRESSED_HEADERS: HeaderDocs = {
  Vary: {
    description: 'Accept-Encoding: the answer is compressed when the request accepts it.',
    schema: { type: 'string', pattern: '^[Aa]ccept-[Ee]ncoding$' },
    required: true,
  },
  'Content-Encoding': {
    description:
      '`br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent ' +
      'otherwise.',
    schema: { type: 'string', enum: ['br', 'gzip'] },
  },
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

/** An answer the client already has: `If-None-Match` named its ETag. */
export const NOT_MODIFIED = {
  description: 'The client already has this version (`If-None-Match` named its `ETag`): no body.',
} as const;
