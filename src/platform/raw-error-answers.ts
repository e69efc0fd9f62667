import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError, FastifyInstance } from 'fastify';
import { docsUrl, toErrorResponse } from './error-response.js';
import { AppError, ErrorKinds } from './errors.js';
import { API_VERSION } from './request-context.js';

/*
 * Error answers written outside Fastify's request cycle, where no reply stands for the request: what Node
 * could not parse or that stalled (the clientError handler), a CONNECT, an Expect not taken. Each is an
 * ErrorResponse with the headers every error answer has, and closes its connection.
 */

/**
 * Writes an ErrorResponse straight to a connection no Fastify reply stands for (a request Node could not
 * parse, a CONNECT), with the headers every error answer has, and says the connection closes.
 */
export function writeRawError(socket: Socket, appError: AppError, publicUrl: string | undefined): void {
  const { headers, body } = closingErrorAnswer(appError, publicUrl);
  const head = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.write(`HTTP/1.1 ${appError.status} ${appError.summary}\r\n${head}\r\n${body}`);
}

/**
 * An ErrorResponse answered outside Fastify's request cycle, with the headers every error answer has, and
 * `Connection: close`: what follows on the connection is not read as another request.
 */
export function closingErrorAnswer(appError: AppError, publicUrl: string | undefined) {
  const body = JSON.stringify(toErrorResponse(appError, docsUrl(publicUrl)));
  const headers: Record<string, string> = {
    Connection: 'close',
    'Content-Type': 'application/json; charset=utf-8',
    'Cache-Control': 'no-store',
    ...appError.headers,
    'API-Version': API_VERSION,
    'Content-Length': String(Buffer.byteLength(body)),
  };
  return { headers, body };
}

/**
 * The answers each connection has not finished writing, for `clientErrorHandler`: one at a time is written,
 * the others (pipelined requests) wait their turn. A socket's entry goes with the socket. Kept from the
 * server's public events (`request`, each answer's `finish`) instead of read from the socket's private
 * `_httpMessage`, as Node's own clientError default does: about 0.4 us a request (300,000 requests in one
 * process), under the noise of a cache hit's 100-130 us.
 */
const unfinishedAnswers = new WeakMap<Socket, Set<ServerResponse>>();

/** Keeps a request's answer among its connection's unfinished ones until it is written (the server's `request`). */
export function keepAnswer(request: IncomingMessage, response: ServerResponse): void {
  const answers = unfinishedAnswers.get(request.socket);
  if (answers === undefined) unfinishedAnswers.set(request.socket, new Set([response]));
  else answers.add(response);
  response.on('finish', forgetAnswer);
}

function forgetAnswer(this: ServerResponse): void {
  unfinishedAnswers.get(this.req.socket)?.delete(this);
}

/**
 * Whether an answer is being written on the connection: the one the connection is writing (the answer whose
 * `socket` it is: the others wait) has sent its head. Node's own clientError default asks the same.
 */
function answering(socket: Socket): boolean {
  for (const answer of unfinishedAnswers.get(socket) ?? []) {
    if (answer.socket === socket && answer.headersSent) return true;
  }
  return false;
}

/** Node's errors for a client that sent too little in time: headers or body stalled past their limit. */
const TIMED_OUT = new Set(['ERR_HTTP_REQUEST_TIMEOUT']);

function clientProblem(error: ConnectionError): AppError {
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return AppError.of(ErrorKinds.BAD_REQUEST, {
      status: 431,
      cause: 'Request headers too large',
      developerReason: 'the request headers are too large',
    });
  }
  if (error.code && TIMED_OUT.has(error.code)) {
    return AppError.of(ErrorKinds.REQUEST_TIMEOUT, {
      developerReason: 'the request headers and body must arrive within the request timeout',
    });
  }
  return AppError.of(ErrorKinds.BAD_REQUEST, {
    cause: 'Bad request',
    developerReason: 'the request is not valid HTTP',
  });
}

/**
 * Node's own answer to a request it cannot parse at all (bad request line, oversized headers) or that
 * stalled (headers or body not in within their time), written raw because no Fastify request exists yet,
 * or its handler is still waiting for the body. It answers only while no answer is being written on the
 * connection (`answering`: the bookkeeping the `errorHandling` plugin adds to the server), then closes it.
 */
export function clientErrorHandler(publicUrl: string | undefined) {
  return function answerClientError(this: FastifyInstance, error: ConnectionError, socket: Socket): void {
    if (socket.writable && !answering(socket)) {
      const appError = clientProblem(error);
      this.log.info({ code: error.code, status: appError.status }, 'client error answered');
      writeRawError(socket, appError, publicUrl);
    }
    socket.destroySoon();
  };
}
