import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { AppError, ErrorKinds } from './errors.js';

export const API_VERSION = '4.0';

/** A client's request id is kept when it is sane: short, and nothing that could forge a log line. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID();
}

/** Headers every response carries, including errors. */
export function stampHeaders(
  reply: { header(name: string, value: string): unknown },
  requestId: string,
): void {
  reply.header('api-version', API_VERSION);
  reply.header('x-request-id', requestId);
}

/**
 * Per request: the version and request-id headers; while the service shuts down, `Connection: close` on
 * every response and a 503 for new requests that arrive on a kept-alive connection.
 */
export const requestContext = fp(async (app: FastifyInstance) => {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });

  app.addHook('onRequest', async (request, reply) => {
    stampHeaders(reply, request.id);
    // Node would answer this itself, a bare 400 (the server is told not to: `requireHostHeader`).
    const { httpVersionMajor, httpVersionMinor } = request.raw;
    if (request.headers.host === undefined && httpVersionMajor === 1 && httpVersionMinor === 1) {
      throw AppError.of(ErrorKinds.BAD_REQUEST, {
        developerReason: 'an HTTP/1.1 request must name its Host (RFC 9112, section 3.2)',
      });
    }
    if (closing) {
      throw AppError.of(ErrorKinds.SHUTTING_DOWN, {
        developerReason: 'this instance is shutting down; retry, and the request will reach another',
        headers: { connection: 'close', 'retry-after': '1' },
      });
    }
  });

  // A response finished while closing ends its connection, so that kept-alive clients do not hold the
  // server open until they time out.
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('connection', 'close');
  });
});
