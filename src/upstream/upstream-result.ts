import type { FastifyReply } from 'fastify';
import { type TSchema, Type } from 'typebox';
import type { Freshness } from '../platform/cache/cached-resource.js';
import { errorResponses } from '../platform/error-response.js';
import { sendJsonBytes, setCacheHeaders } from '../platform/http/cache-headers.js';
import type { OwnerQuota, QuotaStatus } from './owner-quota.js';
import { UpstreamFailure, type UpstreamFailureKind } from './upstream-failure.js';

/**
 * How an upstream-backed endpoint (endpoints 4 and 5) answers over HTTP: its own result shape
 * `{success, cause?, throttle, <field>}` for what the upstream said, ErrorResponse for everything else.
 * The routes of those endpoints use these; the services behind them return domain values.
 */

const FAILURE_STATUS: Record<UpstreamFailureKind, number> = {
  throttled: 429,
  timeout: 504,
  unavailable: 503,
  bad_gateway: 502,
};

export const UNKNOWN_USERNAME_CAUSE = 'No Minecraft player has this username';

/** The result shape's failure body: `{success: false, cause, throttle, <field>: null}`. */
function failureBody(field: string, cause: string, throttle = false): Buffer {
  return Buffer.from(JSON.stringify({ success: false, cause, throttle, [field]: null }));
}

/** A found value, served as its bytes with its cache headers. */
export function sendFound(reply: FastifyReply, body: Buffer, freshness: Freshness): FastifyReply {
  return sendJsonBytes(setCacheHeaders(reply, freshness), 200, body);
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
 * An upstream failure with no copy to stand in, in the result shape: 429 (with Retry-After), 502, 503 or
 * 504, never kept by clients. Anything else that was thrown is not the result shape's to answer: rethrown.
 */
function sendUpstreamFailure(reply: FastifyReply, field: string, error: unknown): FastifyReply {
  if (!(error instanceof UpstreamFailure)) throw error;
  reply.header('cache-control', 'no-store');
  if (error.retryAfterSeconds !== undefined)
    reply.header('retry-after', String(Math.max(1, error.retryAfterSeconds)));
  return sendJsonBytes(
    reply,
    FAILURE_STATUS[error.kind],
    failureBody(field, error.publicCause, error.kind === 'throttled'),
  );
}

/** The name of the owner quota's policy in the RateLimit headers. */
const QUOTA_POLICY = '"upstream"';

/**
 * The caller's standing in their share of the upstream key, as the IETF RateLimit headers say it
 * (draft-ietf-httpapi-ratelimit-headers): `RateLimit-Policy: "upstream";q=<lookups>;w=<window seconds>`
 * and `RateLimit: "upstream";r=<remaining>;t=<seconds to reset>`. None until the key's limit is known.
 */
function setQuotaHeaders(reply: FastifyReply, status: QuotaStatus | undefined): void {
  if (!status) return;
  reply.header('ratelimit-policy', `${QUOTA_POLICY};q=${status.limit};w=${status.windowSeconds}`);
  reply.header('ratelimit', `${QUOTA_POLICY};r=${status.remaining};t=${status.resetSeconds}`);
}

export interface UpstreamLookup<T> {
  /** The result shape's field for the value (`player`, `profiles`). */
  readonly field: string;
  /** Whose lookup it is, and where their share of the key stands. */
  readonly owner: string;
  readonly quota: Pick<OwnerQuota, 'status'>;
  lookup(): Promise<T>;
  send(reply: FastifyReply, found: T): FastifyReply;
}

/**
 * Answers what `lookup` finds with `send`, and an upstream failure with no copy to stand in in the result
 * shape of `field`, every answer with the caller's quota headers: the handler of an upstream-backed endpoint.
 */
export async function answerLookup<T>(reply: FastifyReply, answer: UpstreamLookup<T>): Promise<FastifyReply> {
  let found: T;
  try {
    found = await answer.lookup();
  } catch (error) {
    setQuotaHeaders(reply, await answer.quota.status(answer.owner));
    return sendUpstreamFailure(reply, answer.field, error);
  }
  setQuotaHeaders(reply, await answer.quota.status(answer.owner));
  return answer.send(reply, found);
}

/** The result shape's schema, with `field` holding the upstream's value. */
export function resultShape(field: string, value: TSchema, description: string) {
  return Type.Object(
    {
      success: Type.Boolean(),
      cause: Type.Optional(Type.String({ description: 'Why it failed, when it did.' })),
      throttle: Type.Boolean({
        description:
          'True when the upstream (or its rate budget) is throttling requests: retry after Retry-After.',
      }),
      [field]: value,
    },
    { description },
  );
}

/** Every answer of an upstream-backed endpoint: the result shape for its own outcomes, ErrorResponse for the rest. */
export function resultResponses<S extends TSchema>(result: S) {
  return {
    200: result,
    404: result,
    429: result,
    502: result,
    503: result,
    504: result,
    ...errorResponses(400, 401, 403),
  };
}
