import type { FastifyReply, FastifyRequest } from 'fastify';
import { type TSchema, Type } from 'typebox';
import { principalOf } from '../auth/route-guard.js';
import type { Freshness } from '../cache/cached-resource.js';
import { COMPRESSION_THRESHOLD_BYTES, type ContentEncoding, preferredEncoding } from '../compression.js';
import { ErrorResponseRef, errorResponses } from '../error-response.js';
import { AppError, type ErrorKind } from '../errors.js';
import { addVary, sendJsonBytes, setCacheHeaders } from './cache-headers.js';
import { addRateLimitHeaders, RATE_LIMIT_HEADERS } from './rate-limit-headers.js';
import {
  CACHED_VALUE_HEADERS,
  COMPRESSED_HEADERS,
  type HeaderDocs,
  NO_STORE_HEADERS,
  responseDoc,
  retryAfterHeader,
} from './response-docs.js';

/**
 * How a lookup of a value kept from an upstream (endpoints 4 and 5: players, profiles) answers over HTTP: its
 * own result shape `{success, cause?, throttle, <field>}` for what the lookup found or how it failed,
 * ErrorResponse for everything else. The routes of those endpoints use these; the services behind them
 * return domain values, and the upstream layer says which errors are a lookup's failures and how
 * (`failureOf`, as the cache is given its FailureRules): this file knows no upstream.
 */

/**
 * A lookup's failure, as the answers report it: the catalogue's kind (whose status they take), the cause
 * safe to show a client, whether the upstream is throttling, and when to try again, when known.
 */
export interface LookupFailure {
  readonly kind: ErrorKind;
  readonly cause: string;
  readonly throttle: boolean;
  readonly retryAfterSeconds?: number | undefined;
}

/** Which errors are a lookup's failures, and what each says; undefined for any other error. */
export type FailureOf = (error: unknown) => LookupFailure | undefined;

/** `Retry-After` for a failure that says when to try again (never under a second). */
const retryAfterOf = (failure: LookupFailure): Record<string, string> =>
  failure.retryAfterSeconds === undefined
    ? {}
    : { 'retry-after': String(Math.max(1, failure.retryAfterSeconds)) };

export const UNKNOWN_USERNAME_CAUSE = 'No Minecraft player has this username';

/** The result shape's failure body: `{success: false, cause, throttle, <field>: null}`. */
export function failureBody(field: string, cause: string, throttle = false): Buffer {
  return Buffer.from(JSON.stringify({ success: false, cause, throttle, [field]: null }));
}

/** A value found, as the cache keeps it: its bytes, their freshness, and their compressed copies. */
export interface FoundValue {
  readonly body: Buffer;
  readonly freshness: Freshness;
  encoded(encoding: ContentEncoding): Promise<Buffer>;
}

/**
 * A found value, served as its bytes with its cache headers; compressed (Brotli, else gzip) when the
 * request accepts it, from the copy kept beside the entry: no compression per answer.
 */
export async function sendFound(reply: FastifyReply, found: FoundValue): Promise<FastifyReply> {
  addVary(setCacheHeaders(reply, found.freshness), 'accept-encoding');
  const encoding =
    found.body.length >= COMPRESSION_THRESHOLD_BYTES
      ? preferredEncoding(reply.request.headers['accept-encoding'])
      : undefined;
  if (!encoding) return sendJsonBytes(reply, 200, found.body);
  const compressed = await found.encoded(encoding);
  return sendJsonBytes(reply.header('content-encoding', encoding), 200, compressed);
}

/** "No such player" (404 in the result shape), cached by clients like the lookup that found nothing. */
export function sendNotFound(
  reply: FastifyReply,
  field: string,
  cause: string,
  freshness: Freshness,
): FastifyReply {
  return sendJsonBytes(setCacheHeaders(reply, freshness), 404, failureBody(field, cause));
}

/**
 * The result shape's body of a lookup's failure, as its own answer would carry it (without its status and
 * Retry-After: the items of a bulk read); undefined for an error `failureOf` does not know.
 */
export function failureBodyOf(field: string, error: unknown, failureOf: FailureOf): Buffer | undefined {
  const failure = failureOf(error);
  return failure && failureBody(field, failure.cause, failure.throttle);
}

/**
 * A lookup's failure with no copy to stand in, in the result shape: 429 (with Retry-After), 502, 503 or
 * 504, never kept by clients. Anything else that was thrown is not the result shape's to answer: rethrown.
 */
function sendFailure(reply: FastifyReply, field: string, error: unknown, failureOf: FailureOf): FastifyReply {
  const failure = failureOf(error);
  if (!failure) throw error;
  reply.headers({ 'cache-control': 'no-store', ...retryAfterOf(failure) });
  return sendJsonBytes(reply, failure.kind.status, failureBody(field, failure.cause, failure.throttle));
}

/** An owner's standing in their share of the upstream key: lookups per window, left, and when it refills. */
export interface QuotaStanding {
  readonly limit: number;
  readonly remaining: number;
  readonly resetSeconds: number;
  readonly windowSeconds: number;
}

/** Where owners stand in their shares of the upstream key; undefined until the key's limit is known. */
export interface QuotaStandings {
  status(owner: bigint): Promise<QuotaStanding | undefined>;
}

/**
 * The caller's standing in their share of the upstream key, as the RateLimit headers say it (policy
 * `"upstream"`, beside the owner's `"work"` budget): none until the key's limit is known.
 */
export function setQuotaHeaders(reply: FastifyReply, status: QuotaStanding | undefined): void {
  if (!status) return;
  addRateLimitHeaders(reply, 'upstream', {
    capacity: status.limit,
    windowSeconds: status.windowSeconds,
    remaining: status.remaining,
    resetSeconds: status.resetSeconds,
  });
}

export interface UpstreamLookup<T> {
  /** The result shape's field for the value (`player`, `profiles`). */
  readonly field: string;
  /** Whose lookup it is, and where their share of the key stands. */
  readonly owner: bigint;
  readonly quota: QuotaStandings;
  /** Which errors the lookup may fail with are answered in the result shape. */
  readonly failureOf: FailureOf;
  lookup(): Promise<T>;
  send(reply: FastifyReply, found: T): FastifyReply | Promise<FastifyReply>;
}

/**
 * Answers what `lookup` finds with `send`, and a failure with no copy to stand in in the result shape of
 * `field`, every answer with the caller's quota headers: the handler of an upstream-backed endpoint.
 */
export async function answerLookup<T>(reply: FastifyReply, answer: UpstreamLookup<T>): Promise<FastifyReply> {
  let found: T;
  try {
    found = await answer.lookup();
  } catch (error) {
    setQuotaHeaders(reply, await answer.quota.status(answer.owner));
    return sendFailure(reply, answer.field, error, answer.failureOf);
  }
  setQuotaHeaders(reply, await answer.quota.status(answer.owner));
  return answer.send(reply, found);
}

export interface LookupRoute<T> extends Pick<UpstreamLookup<T>, 'field' | 'quota' | 'failureOf' | 'send'> {
  /** Looks `player` up for `owner` (charged for the upstream calls it costs). */
  lookup(player: string, owner: bigint): Promise<T>;
}

/**
 * The handler of an upstream-backed endpoint, given the `{player}` its route validated: looks it up for
 * the caller's owner and answers with `send`, or in the result shape of `field`.
 */
export function lookupHandler<T>({ lookup, ...answer }: LookupRoute<T>) {
  return (request: FastifyRequest, reply: FastifyReply, player: string) => {
    const { owner } = principalOf(request);
    return answerLookup(reply, { ...answer, owner, lookup: () => lookup(player, owner) });
  };
}

/** The result shape of a failure, `{success: false, cause, throttle, <field>: null}`. */
export function failureShape(field: string) {
  return Type.Object(
    {
      success: Type.Literal(false),
      cause: Type.String({ description: 'Why it failed, safe to show an end user.' }),
      throttle: Type.Boolean({
        description:
          "True when the upstream (or its rate budget, or the caller's share of it) is throttling requests: retry after Retry-After.",
      }),
      [field]: Type.Null(),
    },
    { additionalProperties: false, description: `The lookup failed; \`${field}\` is null.` },
  );
}

const FAILURE_HEADERS: HeaderDocs = { ...NO_STORE_HEADERS, ...RATE_LIMIT_HEADERS };

export interface ResultDocs<S extends TSchema> {
  /** The result shape's field for the value (`player`, `profiles`). */
  readonly field: string;
  /** The 200 body, exactly as the cache keeps and sends it. */
  readonly found: S;
  /** What a 404 (in the result shape) means for this endpoint. */
  readonly notFound: string;
}

/**
 * Every answer of an upstream-backed endpoint: 200 with `found`, its own failures in the result shape
 * (404, 429, 502, 503, 504), and ErrorResponse for the rest; a 503 is either (the upstream unreachable, or
 * the database unavailable or the instance shutting down). Each with its headers.
 */
export function resultResponses<S extends TSchema>({ field, found, notFound }: ResultDocs<S>) {
  const failure = failureShape(field);
  return {
    200: responseDoc(found, {
      headers: { ...CACHED_VALUE_HEADERS, ...COMPRESSED_HEADERS, ...RATE_LIMIT_HEADERS },
    }),
    404: responseDoc(failure, {
      description: notFound,
      headers: { ...CACHED_VALUE_HEADERS, ...RATE_LIMIT_HEADERS },
    }),
    429: responseDoc(Type.Union([failure, ErrorResponseRef]), {
      description:
        "In the result shape: the upstream, its rate budget or the caller's share of it is throttling lookups " +
        "(`throttle: true`). As an ErrorResponse: the owner's budget of the service's work is used up.",
      headers: {
        ...FAILURE_HEADERS,
        ...retryAfterHeader(true, 'Seconds until a lookup may be tried again.'),
      },
    }),
    502: responseDoc(failure, {
      description: 'The upstream answered with an error, or in an unexpected shape.',
      headers: FAILURE_HEADERS,
    }),
    503: responseDoc(Type.Union([failure, ErrorResponseRef]), {
      description:
        'In the result shape: the upstream cannot be reached (or its circuit breaker is open). As an ' +
        'ErrorResponse: the database is unavailable, or the instance is shutting down.',
      headers: {
        ...FAILURE_HEADERS,
        ...retryAfterHeader(false, 'Seconds to wait before trying again, when known.'),
      },
    }),
    504: responseDoc(failure, {
      description: 'The upstream did not answer in time.',
      headers: FAILURE_HEADERS,
    }),
    ...errorResponses(400, 401, 403, 500),
  };
}

/**
 * A route's handler of a lookup's failure met outside endpoints 4 and 5 (a link's verification, a player's
 * name resolved): the failure `failureOf` knows as an ErrorResponse with the status and Retry-After
 * endpoint 5 would answer; anything else is rethrown as it is. `.catch(failureAsError(upstreamFailureOf))`.
 */
export function failureAsError(failureOf: FailureOf): (error: unknown) => never {
  return (error) => {
    const failure = failureOf(error);
    if (!failure) throw error;
    throw AppError.of(failure.kind, { reason: failure.cause, headers: retryAfterOf(failure) });
  };
}
