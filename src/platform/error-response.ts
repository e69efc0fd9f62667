import { type Static, Type } from 'typebox';
import type { AppError } from './errors.js';
import { RATE_LIMIT_HEADERS } from './http/rate-limit-headers.js';
import {
  type HeaderDocs,
  NO_STORE_HEADERS,
  type ResponseDoc,
  responseDoc,
  retryAfterHeader,
} from './http/response-docs.js';

const ErrorObjectSchema = Type.Object(
  {
    code: Type.Integer({ description: 'Stable catalogue code of this problem (see the docs page).' }),
    name: Type.String({ description: 'Stable catalogue name, SCREAMING_SNAKE_CASE.' }),
    reason: Type.String({ description: 'Safe to show an end user.' }),
    developer_reason: Type.String({ description: 'What the developer should fix.' }),
  },
  { additionalProperties: false },
);

export const ErrorResponseSchema = Type.Object(
  {
    success: Type.Boolean({ const: false }),
    code: Type.Integer({ minimum: 400, maximum: 599, description: 'The HTTP status.' }),
    cause: Type.String(),
    documentation: Type.String({ description: 'Link to the docs page section for this error.' }),
    msTime: Type.Integer({ description: "The server's epoch milliseconds when the error was produced." }),
    extra: Type.Array(ErrorObjectSchema, { minItems: 1 }),
  },
  {
    $id: 'ErrorResponse',
    additionalProperties: false,
    description: 'Every error answer, with one `extra` entry per problem.',
  },
);

export type ErrorResponse = Static<typeof ErrorResponseSchema>;

/** An ErrorResponse body, by reference (the schema is registered once by its $id), for a route's `response`. */
export const ErrorResponseRef = Type.Unsafe<ErrorResponse>({ $ref: 'ErrorResponse#' });

/** What an ErrorResponse of each status means, in the OpenAPI document. */
const ERROR_MEANINGS: Readonly<Record<number, string>> = {
  400: 'The request is not valid: each `extra` entry names one faulty field or problem.',
  401: "No access token, or one that is not valid (expired, revoked, not this endpoint's).",
  403: 'The access token is valid but does not grant this.',
  404: 'There is no such resource.',
  409: 'The request conflicts with the state of the resource.',
  413: 'The request body is larger than the limit.',
  414: 'A segment of the path is longer than any value the endpoint takes there (over 100 characters).',
  415: 'The request body is not `application/json`.',
  429:
    'Too many requests: the owner\'s budget of the service\'s work is used up (RateLimit policy "work"), or this ' +
    'client address sent too many requests to an endpoint that issues tokens ("address"): retry after Retry-After.',
  500: 'An unexpected error; it is logged, and the answer reveals nothing of it.',
  503:
    'The service cannot serve now: the database is unavailable (Retry-After: 2) or the instance is shutting ' +
    'down (Retry-After: 1; the request will reach another).',
};

/** The headers an ErrorResponse of each status carries besides `Cache-Control: no-store`. */
const ERROR_HEADERS: Readonly<Record<number, HeaderDocs>> = {
  401: {
    'WWW-Authenticate': {
      description:
        'The RFC 6750 challenge: `Bearer realm="player-data-service"`, with `error` when a token was sent.',
      schema: { type: 'string', pattern: '^Bearer ' },
      required: true,
    },
  },
  403: {
    'WWW-Authenticate': {
      description: 'The RFC 6750 challenge, `error="insufficient_scope"` with the `scope` needed.',
      schema: { type: 'string', pattern: '^Bearer ' },
      required: true,
    },
  },
  415: {
    'Accept-Encoding': {
      description:
        '`identity`, when the body came in a content coding (`Content-Encoding`): bodies are taken uncompressed ' +
        '(RFC 9110, 12.5.3).',
      schema: { type: 'string', enum: ['identity'] },
    },
  },
  429: {
    ...retryAfterHeader(true, 'Seconds until the request may be sent again.'),
    ...RATE_LIMIT_HEADERS,
  },
  503: retryAfterHeader(false, 'Seconds to wait before trying again, when known.'),
};

/** The ErrorResponse of one status, documented with its meaning and headers. */
export function errorResponse(status: number, description?: string): ResponseDoc<typeof ErrorResponseRef> {
  return responseDoc(ErrorResponseRef, {
    description: description ?? ERROR_MEANINGS[status] ?? 'An error.',
    headers: errorHeaders(status),
  });
}

/** The headers every ErrorResponse of `status` carries. */
export const errorHeaders = (status: number): HeaderDocs => ({
  ...NO_STORE_HEADERS,
  ...ERROR_HEADERS[status],
});

/** The documented ErrorResponses of the given statuses, for a route's `response`. */
export function errorResponses<S extends number>(
  ...statuses: S[]
): Record<S, ResponseDoc<typeof ErrorResponseRef>> {
  return Object.fromEntries(statuses.map((status) => [status, errorResponse(status)])) as Record<
    S,
    ResponseDoc<typeof ErrorResponseRef>
  >;
}

/** The docs page anchor of an error name; the docs page renders the same ids. */
export const errorAnchor = (name: string): string => `error-${name}`;

export function toErrorResponse(error: AppError, docsUrl: string, now: number = Date.now()): ErrorResponse {
  const first = error.problems[0]?.kind.name;
  return {
    success: false,
    code: error.status,
    cause: error.summary,
    documentation: `${docsUrl}#${first ? errorAnchor(first) : 'errors'}`,
    msTime: now,
    extra: error.problems.map((problem) => ({
      code: problem.kind.code,
      name: problem.kind.name,
      reason: problem.reason,
      developer_reason: problem.developerReason,
    })),
  };
}

/**
 * The docs page as error bodies link to it: under PUBLIC_URL, or relative. Never from the request's Host
 * header, which the client writes (`Host: evil.example/phish?x=` would turn our link into theirs).
 */
export const docsUrl = (publicUrl: string | undefined): string => `${publicUrl ?? ''}/docs`;
