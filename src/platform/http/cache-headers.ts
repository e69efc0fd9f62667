import type { FastifyReply } from 'fastify';
import type { Freshness } from '../cache/cached-resource.js';

/**
 * The headers of a value served from the cache: `X-Cache` (HIT, MISS, STALE), `Age`, and
 * `Cache-Control: private, max-age=<seconds it is still fresh>` (0 for a stale stand-in).
 */
export function setCacheHeaders(reply: FastifyReply, freshness: Freshness, now = Date.now()): FastifyReply {
  const ageMs = Math.max(0, now - freshness.storedAt);
  const maxAgeSeconds =
    freshness.status === 'STALE' ? 0 : Math.max(0, Math.floor((freshness.freshMs - ageMs) / 1000));
  return reply
    .header('x-cache', freshness.status)
    .header('age', String(Math.floor(ageMs / 1000)))
    .header('cache-control', `private, max-age=${maxAgeSeconds}`);
}

/** Adds `field` to the response's `Vary`, keeping what is there (CORS's `Origin`). */
export function addVary(reply: FastifyReply, field: string): FastifyReply {
  const current = reply.getHeader('vary');
  if (current === undefined) return reply.header('vary', field);
  const fields = String(current)
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  if (!fields.some((part) => part.toLowerCase() === field.toLowerCase())) fields.push(field);
  return reply.header('vary', fields.join(', '));
}

/** Sends JSON bytes as they are: no parse, no serialization (the hot path of cached answers). */
export function sendJsonBytes(reply: FastifyReply, status: number, body: Buffer): FastifyReply {
  return reply.code(status).header('content-type', 'application/json; charset=utf-8').send(body);
}
