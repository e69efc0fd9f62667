import type { FastifyReply } from 'fastify';
import { FAILURE_STATUS, type UpstreamFailure } from '../../upstream/upstream-failure.js';
import type { CacheStatus, Served } from './cached-resource.js';

/** What an upstream-backed endpoint answers: a status, the serialized body, and how it relates to the cache. */
export interface CachedAnswer {
  readonly status: number;
  readonly body: Buffer;
  /** Absent for failures, which are never cached by clients. */
  readonly cache?: {
    readonly status: CacheStatus;
    readonly ageSeconds: number;
    readonly maxAgeSeconds: number;
  };
  readonly retryAfterSeconds?: number;
}

/** The result shape's failure body: `{success: false, cause, throttle, <field>: null}`. */
export function failureBody(field: 'player' | 'profiles', cause: string, throttle = false): Buffer {
  return Buffer.from(JSON.stringify({ success: false, cause, throttle, [field]: null }));
}

/** A served cache entry as an answer, with its age and how much longer clients may keep it. */
export function answerFromServed(served: Served, now: number = Date.now()): CachedAnswer {
  const { entry, cacheStatus, freshMs } = served;
  const ageMs = Math.max(0, now - entry.storedAt);
  const maxAgeSeconds = cacheStatus === 'STALE' ? 0 : Math.max(0, Math.floor((freshMs - ageMs) / 1000));
  return {
    status: entry.status,
    body: entry.body,
    cache: { status: cacheStatus, ageSeconds: Math.floor(ageMs / 1000), maxAgeSeconds },
  };
}

/** An upstream failure with no copy to stand in, as the result shape: 429, 502, 503 or 504. */
export function answerFromFailure(field: 'player' | 'profiles', failure: UpstreamFailure): CachedAnswer {
  return {
    status: FAILURE_STATUS[failure.kind],
    body: failureBody(field, failure.publicCause, failure.kind === 'throttled'),
    retryAfterSeconds: failure.retryAfterSeconds,
  };
}

/** Sends an answer's bytes as they are (no re-serialization: the hot path), with its cache headers. */
export function sendAnswer(reply: FastifyReply, answer: CachedAnswer): FastifyReply {
  reply.code(answer.status).header('content-type', 'application/json; charset=utf-8');
  if (answer.cache) {
    reply
      .header('x-cache', answer.cache.status)
      .header('age', String(answer.cache.ageSeconds))
      .header('cache-control', `private, max-age=${answer.cache.maxAgeSeconds}`);
  } else {
    reply.header('cache-control', 'no-store');
  }
  if (answer.retryAfterSeconds !== undefined)
    reply.header('retry-after', String(Math.max(1, answer.retryAfterSeconds)));
  return reply.send(answer.body);
}
