import type { FastifyReply } from 'fastify';
import { type TSchema, Type } from 'typebox';
import type { Freshness } from '../platform/cache/cached-resource.js';
import { errorResponses } from '../platform/error-response.js';
import { sendJsonBytes, setCacheHeaders } from '../platform/http/cache-headers.js';
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

/**
 * Answers what `lookup` finds with `send`, and an upstream failure with no copy to stand in in the result
 * shape of `field`: the handler of an upstream-backed endpoint.
 */
export async function answerLookup<T>(
  reply: FastifyReply,
  field: string,
  lookup: () => Promise<T>,
  send: (reply: FastifyReply, found: T) => FastifyReply,
): Promise<FastifyReply> {
  let found: T;
  try {
    found = await lookup();
  } catch (error) {
    return sendUpstreamFailure(reply, field, error);
  }
  return send(reply, found);
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
