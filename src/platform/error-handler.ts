import type { Socket } from 'node:net';
import type { ConnectionError, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { ErrorResponseSchema, toErrorResponse } from './error-response.js';
import { AppError, ErrorKinds } from './errors.js';
import { API_VERSION } from './request-context.js';
import { validationError } from './validation.js';

/** Maps anything thrown while serving a request to the AppError it is answered with. */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  const fastifyError = error as Partial<FastifyError>;
  if (fastifyError.validation)
    return validationError(fastifyError.validation, fastifyError.validationContext ?? 'body');
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return AppError.of(ErrorKinds.UNSUPPORTED_MEDIA_TYPE, {
        developerReason: 'send the body as JSON with Content-Type: application/json',
      });
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return AppError.of(ErrorKinds.BODY_TOO_LARGE, {
        developerReason: 'the body is over the size limit of this endpoint',
      });
  }
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // Fastify's own client-error messages ("Content-Length does not match ...") say nothing internal.
    return AppError.of(ErrorKinds.BAD_REQUEST, {
      status,
      developerReason: fastifyError.message ?? 'bad request',
    });
  }
  return AppError.of(ErrorKinds.INTERNAL_ERROR, {
    developerReason: 'an unexpected error; it has been logged',
  });
}

export interface ErrorHandlingOptions {
  /** Base URL of links in error bodies; the request's own origin when undefined. */
  readonly publicUrl: string | undefined;
}

const docsUrl = (request: FastifyRequest, publicUrl: string | undefined): string =>
  `${publicUrl ?? `${request.protocol}://${request.host}`}/docs`;

/** Answers an error with an ErrorResponse; 5xx errors are logged with their stack, never sent. */
export function sendError(
  error: unknown,
  request: FastifyRequest,
  reply: FastifyReply,
  publicUrl: string | undefined,
) {
  const appError = toAppError(error);
  if (appError.status >= 500) request.log.error({ err: error }, 'request failed');
  return reply
    .code(appError.status)
    .headers(appError.headers)
    .type('application/json; charset=utf-8')
    .send(toErrorResponse(appError, docsUrl(request, publicUrl)));
}

const METHODS: HTTPMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** The error handler, and the not-found handler that tells an unknown route (404) from a wrong method (405). */
export const errorHandling = fp<ErrorHandlingOptions>(async (app: FastifyInstance, { publicUrl }) => {
  app.addSchema(ErrorResponseSchema);
  // A second router, fed the same routes, answers "which methods does this path take?".
  const routes = FindMyWay();
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.on(method as HTTPMethod, route.url, () => undefined);
  });

  app.setErrorHandler((error, request, reply) => sendError(error, request, reply, publicUrl));

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?', 1)[0] ?? '/';
    const allowed = METHODS.filter((method) => routes.find(method, path) !== null);
    const error =
      allowed.length > 0
        ? AppError.of(ErrorKinds.METHOD_NOT_ALLOWED, {
            developerReason: `${request.method} is not allowed on ${path}; use ${allowed.join(', ')}`,
            headers: { allow: allowed.join(', ') },
          })
        : AppError.of(ErrorKinds.ROUTE_NOT_FOUND, {
            developerReason: `no endpoint ${request.method} ${path}`,
          });
    return sendError(error, request, reply, publicUrl);
  });
});

/**
 * Node's own answer to a request it cannot parse at all (bad request line, oversized headers), written
 * raw because no Fastify request exists yet.
 */
export function clientErrorHandler(error: ConnectionError, socket: Socket): void {
  if (!socket.writable) return;
  const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
  const appError = AppError.of(ErrorKinds.BAD_REQUEST, {
    status: tooLarge ? 431 : 400,
    cause: tooLarge ? 'Request headers too large' : 'Bad request',
    developerReason: tooLarge ? 'the request headers are too large' : 'the request is not valid HTTP',
  });
  const body = JSON.stringify(toErrorResponse(appError, '/docs'));
  socket.end(
    `HTTP/1.1 ${appError.status} ${appError.summary}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `API-Version: ${API_VERSION}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}
