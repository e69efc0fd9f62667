import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  COMPRESSION_THRESHOLD_BYTES,
  CONTENT_ENCODINGS,
  type ContentEncoding,
  compress,
  preferredEncoding,
} from '../compression.js';
import { addVary } from './cache-headers.js';

/** A body kept in memory, sent with its ETag as the request accepts. */
export interface StoredBody {
  /** The bytes it holds: the body, and the compressed copies made so far. */
  readonly size: number;
  /** Answers with the body: compressed as the request accepts (copies made once), 304 when it has it. */
  send(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply>;
}

/**
 * `bytes` as a kept body: answering costs no serialization and no compression (a compressed copy is made
 * in zlib's thread pool on the first request that accepts it, and kept; `grew` is told), and a client that
 * has it (`If-None-Match` naming one of its ETags) gets a 304 without it. Each representation has its own
 * strong ETag: `tag` (which must name these bytes and no others, among the answers of its URL), with `-br`
 * or `-gzip` for a compressed copy. Its route must say `compress: false`.
 */
export function storedBody(
  contentType: string,
  bytes: Buffer,
  tag: string,
  grew: () => void = () => undefined,
): StoredBody {
  const copies = new Map<ContentEncoding, Promise<Buffer>>();
  let size = bytes.length;
  return {
    get size() {
      return size;
    },
    async send(request, reply) {
      const encoding =
        bytes.length >= COMPRESSION_THRESHOLD_BYTES
          ? preferredEncoding(request.headers['accept-encoding'])
          : undefined;
      addVary(reply.header('content-type', contentType), 'accept-encoding').header(
        'etag',
        etagOf(tag, encoding),
      );
      if (namesOurs(request.headers['if-none-match'], tag)) return reply.code(304).send();
      if (!encoding) return reply.send(bytes);
      let copy = copies.get(encoding);
      if (!copy) {
        copy = compress(bytes, encoding);
        copies.set(encoding, copy);
        copy.then(
          (made) => {
            size += made.length;
            grew();
          },
          // A failed compression is not kept: the next request tries again.
          () => copies.delete(encoding),
        );
      }
      return reply.header('content-encoding', encoding).send(await copy);
    },
  };
}

/** The ETag of one representation: the body's tag, with the encoding of a compressed copy. */
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
