import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { isDatabaseUnavailable, isDatabaseUnwritable } from './db/availability.js';
import { docsUrl, ErrorResponseSchema, toErrorResponse } from './error-response.js';
import { AppError, type ErrorKind, ErrorKinds } from './errors.js';
import { challengeOf } from './http/auth-challenge.js';
import { closingErrorAnswer, keepAnswer, writeRawError } from './raw-error-answers.js';
import { validationError } from './validation.js';

/**
 * How soon a client should try again when the database is out: a pool opens a new connection on the next
 * request, so a dropped connection heals at once, and a restart takes seconds.
 */
const DATABASE_RETRY_AFTER_SECONDS = 2;

/** Fastify's refusals of a request, each as an error of the catalogue with a reason that quotes nothing. */
const FASTIFY_REFUSALS: Readonly<Record<string, { kind: ErrorKind; developerReason: string }>> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    kind: ErrorKinds.UNSUPPORTED_MEDIA_TYPE,
    developerReason: 'send the body as JSON with Content-Type: application/json',
  },
  FST_ERR_CTP_BODY_TOO_LARGE: {
    kind: ErrorKinds.BODY_TOO_LARGE,
    developerReason: 'the body is over the size limit of this endpoint',
  },
  FST_ERR_BAD_URL: {
    kind: ErrorKinds.BAD_REQUEST,
    developerReason: 'the path is not valid percent-encoding (a % must be followed by two hex digits)',
  },
  FST_ERR_MAX_PARAM_LENGTH: {
    kind: ErrorKinds.URI_TOO_LONG,
    developerReason: 'a segment of the path is longer than any value an endpoint takes there',
  },
};

/** Maps anything thrown while serving a request to the AppError it is answered with. */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (isDatabaseUnavailable(error)) {
    return AppError.of(ErrorKinds.DEPENDENCY_UNAVAILABLE, {
      reason: 'The database is unavailable; try again shortly.',
      developerReason:
        'the database cannot serve this now (unreachable, busy, or unable to write); retry after the Retry-After seconds',
      headers: { 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) },
    });
  }
  const fastifyError = error as Partial<FastifyError>;
  if (fastifyError.validation)
    return validationError(fastifyError.validation, fastifyError.validationContext ?? 'body');
  const known = fastifyError.code === undefined ? undefined : FASTIFY_REFUSALS[fastifyError.code];
  if (known) return AppError.of(known.kind, { developerReason: known.developerReason });
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // Fastify's code, not its message: some messages quote the request (its URL, with any secret in it).
    return AppError.of(ErrorKinds.BAD_REQUEST, {
      status,
      developerReason: `the request is malformed (${fastifyError.code ?? 'unknown'})`,
    });
  }
  return AppError.of(ErrorKinds.INTERNAL_ERROR, {
    developerReason: 'an unexpected error; it has been logged',
  });
}

export interface ErrorHandlingOptions {
  /** Base URL of links in error bodies; links are relative when undefined. */
  readonly publicUrl: string | undefined;
}

/** Headers of every error answer: no cache keeps an error, and it says which version answered it. */
const ERROR_HEADERS = { 'cache-control': 'no-store' } as const;

/**
 * Answers an error with an ErrorResponse; 5xx errors are logged with their stack, never sent. The body is
 * serialized here, not by the route's response schemas: those describe the route's own answers.
 */
export function sendError(
  error: unknown,
  request: FastifyRequest,
  reply: FastifyReply,
  publicUrl: string | undefined,
) {
  const appError = toAppError(error);
  // An outage of the database is expected weather, logged once per connection lost by the pool: each
  // request it fails is a warning with the driver's words, not an error with a stack.
  if (isDatabaseUnavailable(error)) {
    const { message, code } = error as Error & { code?: string };
    // But a database that cannot write (a full disk, a read-only one): not weather, it waits for its operator.
    if (isDatabaseUnwritable(error))
      request.log.error({ reason: message, code }, 'database cannot write; answered 503');
    else request.log.warn({ reason: message, code }, 'database unavailable; answered 503');
  } else if (appError.status >= 500 && !(error instanceof AppError)) {
    // An AppError is an answer the code chose (a dependency down, shutting down), logged where it was
    // decided; anything else answered 5xx is a bug.
    request.log.error({ err: error }, 'request failed');
  }
  reply.code(appError.status).headers(ERROR_HEADERS);
  const challenge = challengeOf(appError);
  if (challenge !== undefined) reply.header('www-authenticate', challenge);
  for (const [name, value] of Object.entries(appError.headers)) {
    // A list header another limit already wrote on this answer (the address limit's RateLimit items) is
    // added to, not replaced.
    const known = LIST_HEADERS.has(name) ? reply.getHeader(name) : undefined;
    reply.header(name, known === undefined ? value : `${String(known)}, ${value}`);
  }
  return reply
    .type('application/json; charset=utf-8')
    .send(JSON.stringify(toErrorResponse(appError, docsUrl(publicUrl))));
}

/** Headers whose value is a list each part of the service may add an item to. */
const LIST_HEADERS = new Set(['ratelimit', 'ratelimit-policy']);

const METHODS: HTTPMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** How much of a path the client wrote an error quotes back: an answer stays small whatever the URL. */
const SHOWN_PATH_LENGTH = 200;
const shown = (path: string) =>
  path.length > SHOWN_PATH_LENGTH ? `${path.slice(0, SHOWN_PATH_LENGTH)}...` : path;

/**
 * The error handler, and the not-found handling that tells an unknown route (404) from a wrong method (405)
 * for every method Node parses (`http.METHODS`), whatever the request's body and Content-Type.
 */
export const errorHandling = fp<ErrorHandlingOptions>(async (app: FastifyInstance, { publicUrl }) => {
  app.addSchema(ErrorResponseSchema);
  // What the clientError handler must know of each connection: whether an answer is being written on it.
  app.server.on('request', keepAnswer);
  // A second router, fed the same routes, answers "which methods does this path take?".
  const routes = FindMyWay();
  app.addHook('onRoute', (route) => {
    // The catch-all OPTIONS route of @fastify/cors answers preflights: no path takes OPTIONS for it.
    if (route.method === 'OPTIONS' && route.url === '*') return;
    for (const method of [route.method].flat()) routes.on(method as HTTPMethod, route.url, () => undefined);
  });
  const noRoute = (method: string, url: string): AppError => {
    const path = url.split('?', 1)[0] ?? '/';
    // A CONNECT's target is a host and port, no path of ours.
    const allowed = path.startsWith('/') ? METHODS.filter((each) => routes.find(each, path) !== null) : [];
    // A route that takes this method found nothing (a missing file under a wildcard): 404, not 405.
    return allowed.length > 0 && !allowed.includes(method as HTTPMethod)
      ? AppError.of(ErrorKinds.METHOD_NOT_ALLOWED, {
          developerReason: `${method} is not allowed on ${shown(path)}; use ${allowed.join(', ')}`,
          headers: { allow: allowed.join(', ') },
        })
      : AppError.of(ErrorKinds.ROUTE_NOT_FOUND, { developerReason: `no endpoint ${method} ${shown(path)}` });
  };

  app.setErrorHandler((error, request, reply) => sendError(error, request, reply, publicUrl));

  // A request no route takes is answered before its body is looked at: Fastify would otherwise check and
  // parse the body of some methods first (a QUERY without Content-Type, an OPTIONS with a text body, a POST
  // to an unknown path with malformed JSON) and answer a 400 or 415 of its own. That is the not-found route,
  // and the catch-all OPTIONS route of @fastify/cors for an OPTIONS that is no preflight (a preflight was
  // answered by its `onRequest` hook). It runs after every `onRequest` hook, so the answer has its request id
  // and CORS headers. Once answered, `done` is not called (Fastify's way to answer from a hook): the body is
  // never read, and Node discards it.
  app.addHook('preParsing', (request, reply, _payload, done) => {
    if (!request.is404 && !(request.method === 'OPTIONS' && request.routeOptions.url === '*')) {
      done();
      return;
    }
    sendError(noRoute(request.method, request.url), request, reply, publicUrl);
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(noRoute(request.method, request.url), request, reply, publicUrl),
  );

  // CONNECT never reaches Fastify: Node hands the connection over as a tunnel, and without a listener closes
  // it unanswered. It gets the not-found answer, written raw, and the connection is closed.
  // An `Expect` other than 100-continue: Node answers it by itself (a bare 417, and the body that follows
  // read as the next request) unless the server listens for it.
  app.server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    const appError = AppError.of(ErrorKinds.EXPECTATION_FAILED, {
      developerReason: 'the only Expect taken is 100-continue; leave the header out',
    });
    app.log.info({ method: request.method, status: appError.status }, 'expectation refused');
    const { headers, body } = closingErrorAnswer(appError, publicUrl);
    response.writeHead(appError.status, headers).end(body);
  });
  app.server.on('connect', (request: IncomingMessage, socket: Socket) => {
    socket.on('error', () => undefined);
    const appError = noRoute(request.method ?? 'CONNECT', request.url ?? '');
    app.log.info({ method: request.method, status: appError.status }, 'CONNECT answered');
    writeRawError(socket, appError, publicUrl);
    socket.end();
  });
});
