import { type ErrorKind, errorCatalogue } from '../errors.js';
import { API_VERSION } from '../request-context.js';
import { EXPOSED_HEADERS } from './cors.js';
import { REQUIRED_HEADER_KEY } from './response-docs.js';
import { isObject, type Json } from './route-docs.js';

/*
 * The rendered OpenAPI document's headers every answer carries, and its last pass over what
 * @fastify/swagger rendered.
 */

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

/** Headers every answer carries, errors included (platform/request-context.ts), as components.headers. */
export const PLATFORM_HEADERS = {
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
export const CORS_HEADERS = {
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
export function finishDocument(document: Json, cors: boolean): Json {
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
