import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  COMPRESSION_THRESHOLD_BYTES,
  type ContentEncoding,
  compress,
  preferredEncoding,
} from '../compression.js';

/** A body that never changes while the process runs (the OpenAPI document, the documentation page). */
export interface FixedBody {
  /** Answers with the body: compressed as the request accepts (copies made once), 304 when it has it. */
  send(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply>;
}

/**
 * A fixed body, made on the first request that needs it (`make`) and kept with its compressed copies:
 * answering costs no serialization and no compression, and a client that has it (`If-None-Match` with its
 * strong ETag) gets a 304 without it. Its route must say `compress: false`.
 */
export function fixedBody(contentType: string, make: () => string): FixedBody {
  let identity: { bytes: Buffer; etag: string } | undefined;
  const copies = new Map<ContentEncoding, Promise<Buffer>>();
  return {
    async send(request, reply) {
      if (!identity) {
        const bytes = Buffer.from(make());
        identity = {
          bytes,
          etag: `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 27)}"`,
        };
      }
      reply
        .header('content-type', contentType)
        .header('etag', identity.etag)
        .header('vary', 'accept-encoding');
      if (matchesEtag(request.headers['if-none-match'], identity.etag)) return reply.code(304).send();
      const encoding =
        identity.bytes.length >= COMPRESSION_THRESHOLD_BYTES
          ? preferredEncoding(request.headers['accept-encoding'])
          : undefined;
      if (!encoding) return reply.send(identity.bytes);
      let copy = copies.get(encoding);
      if (!copy) {
        copy = compress(identity.bytes, encoding);
        copies.set(encoding, copy);
      }
      return reply.header('content-encoding', encoding).send(await copy);
    },
  };
}

/** Whether `If-None-Match` names the ETag (or is `*`); weak forms match too (RFC 9110, 13.1.2). */
function matchesEtag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  return ifNoneMatch
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//, ''))
    .some((tag) => tag === '*' || tag === etag);
}
