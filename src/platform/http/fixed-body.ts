import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  COMPRESSION_THRESHOLD_BYTES,
  CONTENT_ENCODINGS,
  type ContentEncoding,
  compress,
  preferredEncoding,
} from '../compression.js';
import { addVary } from './cache-headers.js';

/** A body that never changes while the process runs (the OpenAPI document, the documentation page). */
export interface FixedBody {
  /** Answers with the body: compressed as the request accepts (copies made once), 304 when it has it. */
  send(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply>;
}

/**
 * A fixed body, made on the first request that needs it (`make`) and kept with its compressed copies:
 * answering costs no serialization and no compression, and a client that has it (`If-None-Match` naming
 * one of its ETags) gets a 304 without it. Each representation has its own strong ETag (the identity
 * bytes' hash, with `-br` or `-gzip` for a compressed copy). Its route must say `compress: false`.
 */
export function fixedBody(contentType: string, make: () => string): FixedBody {
  let identity: { bytes: Buffer; tag: string } | undefined;
  const copies = new Map<ContentEncoding, Promise<Buffer>>();
  return {
    async send(request, reply) {
      if (!identity) {
        const bytes = Buffer.from(make());
        identity = { bytes, tag: createHash('sha256').update(bytes).digest('base64url').slice(0, 27) };
      }
      const encoding =
        identity.bytes.length >= COMPRESSION_THRESHOLD_BYTES
          ? preferredEncoding(request.headers['accept-encoding'])
          : undefined;
      addVary(reply.header('content-type', contentType), 'accept-encoding').header(
        'etag',
        etagOf(identity.tag, encoding),
      );
      if (namesOurs(request.headers['if-none-match'], identity.tag)) return reply.code(304).send();
      if (!encoding) return reply.send(identity.bytes);
      let copy = copies.get(encoding);
      if (!copy) {
        copy = compress(identity.bytes, encoding);
        copies.set(encoding, copy);
        // A failed compression is not kept: the next request tries again.
        copy.catch(() => copies.delete(encoding));
      }
      return reply.header('content-encoding', encoding).send(await copy);
    },
  };
}

/** The ETag of one representation: the identity bytes' hash, with the encoding of a compressed copy. */
const etagOf = (tag: string, encoding: ContentEncoding | undefined) =>
  encoding ? `"${tag}-${encoding}"` : `"${tag}"`;

/**
 * Whether `If-None-Match` is `*` or names one of the body's ETags (any representation: the client holds
 * this very document); compared weakly, as RFC 9110 (13.1.2) says for `If-None-Match`.
 */
function namesOurs(ifNoneMatch: string | undefined, tag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  const ours = new Set([undefined, ...CONTENT_ENCODINGS].map((encoding) => etagOf(tag, encoding)));
  return ifNoneMatch
    .split(',')
    .map((etag) => etag.trim().replace(/^W\//, ''))
    .some((etag) => etag === '*' || ours.has(etag));
}
