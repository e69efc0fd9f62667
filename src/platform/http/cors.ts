import cors, { type FastifyCorsOptions, type FastifyCorsOptionsDelegateCallback } from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

export interface CorsOptions {
  /** Exact origins (`https://example.com`), or `['*']` for any origin; registered only when not empty. */
  readonly origins: readonly string[];
}

/** The methods the API's routes take (HEAD, like GET, needs no preflight). */
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** Request headers a browser may send: the bearer token, a JSON body, and a request id to correlate logs. */
const ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'X-Request-Id'];

/**
 * Response headers a browser client may read beyond the CORS-safelisted ones (Cache-Control, Content-Type,
 * ...): the cache's (`X-Cache`, `Age`), rate limits and throttles (`Retry-After`, `RateLimit` and
 * `RateLimit-Policy`), the request's stamp, why a token
 * was refused, where a created resource is, and which methods a path takes (on a 405).
 */
export const EXPOSED_HEADERS = [
  'X-Cache',
  'Age',
  'Retry-After',
  'RateLimit',
  'RateLimit-Policy',
  'API-Version',
  'X-Request-Id',
  'WWW-Authenticate',
  'Location',
  'Allow',
];

/** How long a browser may keep a preflight's answer (browsers cap it: Chromium at 2 hours). */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * CORS for browser clients (`CORS_ORIGINS`), through @fastify/cors in an `onRequest` hook, so that it runs
 * before any route guard and its headers are on every answer, errors included:
 *
 * - A request from a listed origin gets `Access-Control-Allow-Origin` (its origin, or `*` when any origin
 *   is allowed) and `Access-Control-Expose-Headers`. No credentials: the API takes bearer tokens, never
 *   cookies.
 * - A preflight from a listed origin (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) is
 *   answered 204 on any path, without a token.
 * - Anything else (no `Origin`, an origin not listed, an `OPTIONS` that is no preflight) is served as if
 *   CORS were off: no CORS headers, and `OPTIONS` is a 405 (or 404) ErrorResponse. The browser blocks
 *   what it may not read.
 *
 * Every response carries `Vary: Origin`, so that a cache does not hand one origin's answer to another.
 */
export const crossOrigin = fp<CorsOptions>(async (app: FastifyInstance, { origins }) => {
  const anyOrigin = origins.includes('*');
  const listed = new Set(origins);
  const allowed: FastifyCorsOptions = {
    // `true` reflects the request's origin, which the delegate below has checked against the list.
    origin: anyOrigin ? '*' : true,
    credentials: false,
    methods: METHODS,
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: PREFLIGHT_MAX_AGE_SECONDS,
    preflight: false,
  };
  const preflight: FastifyCorsOptions = { ...allowed, preflight: true };
  const none: FastifyCorsOptions = { origin: false };

  const optionsFor = (request: FastifyRequest): FastifyCorsOptions => {
    const origin = request.headers.origin;
    if (origin === undefined || !(anyOrigin || listed.has(origin))) return none;
    return request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined
      ? preflight
      : allowed;
  };
  const delegator: FastifyCorsOptionsDelegateCallback = (request, callback) =>
    callback(null, optionsFor(request));

  await app.register(cors, { hook: 'onRequest', delegator });
});
