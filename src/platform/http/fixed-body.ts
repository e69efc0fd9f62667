import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type StoredBody, storedBody } from './stored-body.js';

/** A body that never changes while the process runs (the OpenAPI document, the documentation page). */
export interface FixedBody {
  /** Answers with the body: compressed as the request accepts (copies made once), 304 when it has it. */
  send(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply>;
}

/**
 * A fixed body, made on the first request that needs it (`make`) and kept as a stored body (its copies,
 * its ETags: the identity bytes' hash, with `-br` or `-gzip` for a compressed copy). Its route must say
 * `compress: false`.
 */
export function fixedBody(contentType: string, make: () => string): FixedBody {
  let body: StoredBody | undefined;
  return {
    send(request, reply) {
      if (!body) {
        const bytes = Buffer.from(make());
        body = storedBody(
          contentType,
          bytes,
          createHash('sha256').update(bytes).digest('base64url').slice(0, 27),
        );
      }
      return body.send(request, reply);
    },
  };
}
