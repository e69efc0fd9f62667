import type { FastifySchema } from 'fastify';
import { guardOf } from '../auth/route-guard.js';
import { errorResponses } from '../error-response.js';
import { RATE_LIMIT_HEADERS } from './rate-limit-headers.js';
import { COMPRESSIBLE_HEADERS, type ResponseDoc, withDefaultHeaders, withHeaders } from './response-docs.js';

/*
 * Each route's schema as the OpenAPI document shows it (@fastify/swagger's transform): the scopes its guard
 * checks, the errors and headers every route has beside the ones it declares.
 */

export type Json = Record<string, unknown>;
export const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null;

/**
 * Statuses any route can answer with an ErrorResponse: an HTTP/1.1 request without Host (400), a body it was
 * sent that is too large or not JSON (any request may carry one, and it is read before the route looks at
 * it), an unexpected error, the database out, shutting down.
 */
const EVERY_ROUTE_ERRORS = [400, 413, 415, 500, 503] as const;

/**
 * Per route, before rendering: a route that documents its answers gets the ErrorResponses every route can
 * answer with (400, 413, 415, 500, 503), unless it declares those statuses itself. A route with a path parameter
 * answers 414 for a segment longer than the router takes (Fastify's `maxParamLength`, 100). A route that
 * takes a token also answers 429 when its owner's work budget is used up, and its answers carry the
 * RateLimit headers.
 */
function withEveryRouteErrors(schema: Json, url: string): Json {
  if (!isObject(schema.response)) return schema;
  const secured = Array.isArray(schema.security) && schema.security.length > 0;
  const response: Json = {
    ...errorResponses(
      ...EVERY_ROUTE_ERRORS,
      ...(url.includes(':') ? ([414] as const) : []),
      ...(secured ? ([429] as const) : []),
    ),
    ...schema.response,
  };
  return {
    ...schema,
    response: secured
      ? withHeaders(response as Readonly<Record<number, ResponseDoc>>, RATE_LIMIT_HEADERS)
      : response,
  };
}

/**
 * The answers of a route that does not say `compress: false` go through @fastify/compress, errors included:
 * any of them may come compressed, with `Content-Encoding` and `Vary`. Declared on each, beside the headers
 * the route declares (which win: a route that compresses by itself says how).
 */
function withCompressibleHeaders(schema: Json): Json {
  if (!isObject(schema.response)) return schema;
  const responses = schema.response as Readonly<Record<number, ResponseDoc>>;
  return { ...schema, response: withDefaultHeaders(responses, COMPRESSIBLE_HEADERS) };
}

interface RouteHooks {
  readonly onRequest?: unknown;
  readonly preHandler?: unknown;
  readonly compress?: unknown;
}

/**
 * A route's security with its guard's grant as the scope of every bearer requirement: the document's scopes
 * come from the guard that checks them (route-guard.ts), never from a second list.
 */
function withGuardScopes(schema: Json, route: RouteHooks | undefined): Json {
  if (!Array.isArray(schema.security)) return schema;
  const guard = route && guardOf(route.onRequest, route.preHandler);
  if (!guard) return schema;
  const scopes = guard.grant ? [guard.grant] : [];
  return {
    ...schema,
    security: schema.security.map((requirement: Record<string, string[]>) =>
      'bearerAuth' in requirement ? { ...requirement, bearerAuth: scopes } : requirement,
    ),
  };
}

/** Each route's schema as the document shows it: its scopes, the errors and headers every route has. */
export function documentedRoute({
  schema,
  url,
  route,
}: {
  schema: FastifySchema;
  url: string;
  route?: RouteHooks;
}) {
  if (!isObject(schema) || schema.hide) return { schema, url };
  const complete = withEveryRouteErrors(withGuardScopes(schema, route), url);
  return {
    schema: route?.compress === false ? complete : withCompressibleHeaders(complete),
    url,
  };
}
