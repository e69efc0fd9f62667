import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  onRequestAsyncHookHandler,
  preHandlerAsyncHookHandler,
} from 'fastify';
import fp from 'fastify-plugin';
import { AppError, ErrorKinds } from '../errors.js';
import { admitRequest, type WorkBudget } from '../limits/work-budget.js';
import { invalidToken, withHint } from './auth-errors.js';
import type { Grant } from './grants.js';
import { type Authenticator, ensureOwnerOrHolder, type Principal } from './principal.js';
import { authenticateSession, type SessionAuthenticator, sessionIdOf } from './session.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller; set by a route guard. Read it with `principalOf(request)`. */
    principal?: Principal;
  }
  interface FastifyInstance {
    /**
     * A route guard (`onRequest`): a valid bearer token, carrying `grant` when one is named, whose owner's
     * work budget admits the request (401 / 403 / 429 otherwise). Decorated by `routeGuards`.
     */
    requireGrant(grant?: Grant, options?: GuardOptions): onRequestAsyncHookHandler;
    /**
     * A route guard for someone's resource: a valid bearer token whose owner is the snowflake path
     * parameter `ownerParam`, or which carries `grant`, and whose owner's budget admits it (401 / 403 / 429).
     * Decorated by `routeGuards`.
     */
    requireOwnerOrGrant(grant: Grant, ownerParam: string): preHandlerAsyncHookHandler;
    /**
     * The OpenAPI `security` of a route guarded with `{ session: true }`: a bearer token, or the portal's
     * session when Discord sign-in is on. Decorated by `routeGuards`.
     */
    readonly portalSecurity: { [scheme: string]: string[] }[];
  }
}

const BEARER = /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i;

/** The request's bearer token, verified: its principal (401 when missing or not acceptable). */
async function authenticate(gate: Gate, request: FastifyRequest): Promise<Principal> {
  const header = request.headers.authorization;
  if (!header) {
    throw AppError.of(ErrorKinds.TOKEN_MISSING, {
      developerReason: 'send the token in an Authorization: Bearer <token> header',
    });
  }
  const token = BEARER.exec(header)?.[1];
  if (!token) throw invalidToken('the Authorization header must be "Bearer <token>"');
  return gate.authenticator.authenticate(token);
}

/**
 * What the guards check a request against: its token (or, on the routes that take one, a sign-in
 * session's cookie, when sign-in is on), and its owner's budget of work (when there is one).
 */
export interface Gate {
  readonly authenticator: Authenticator;
  /**
   * Where a token comes from, said by every 401 of the guards: `token` on the routes that take any token,
   * `identity` on those that manage keys (the portal's session or an identity token).
   */
  readonly wayIn?: { readonly token: string; readonly identity: string };
  readonly sessions?: SessionAuthenticator;
  readonly budget?: WorkBudget;
}

/**
 * The principal's request, admitted: its owner's budget (when the gate has one) takes its upfront cost,
 * whether or not the token may use the route: every request a token makes is its owner's to pay for.
 */
async function admitted(gate: Gate, request: FastifyRequest, reply: FastifyReply, principal: Principal) {
  // Known before admission: a refused request is its owner's too (their usage counts it).
  request.principal = principal;
  if (gate.budget) await admitRequest(gate.budget, request, reply.raw, principal.owner);
}

export interface GuardOptions {
  /**
   * How a token that names no owner (`TOKEN_NO_OWNER`) is answered: 401 like any unacceptable token, unless
   * the route says 400 (the interface: creating an application "fails with status 400" when the owner ID cannot
   * be taken from the token).
   */
  readonly noOwnerStatus?: 400 | 401;
  /**
   * Whether the route also takes a developer's sign-in session (the portal's cookie) when the request has
   * no Authorization header: its principal is the signed-in owner, with no grant but a reviewer's. Only
   * routes a developer uses in the portal take one: a session never opens the data routes. `only`: the
   * route takes the session alone (signing out, an identity token for the session): a bearer token is 401.
   */
  readonly session?: boolean | 'only';
  /**
   * The route manages its owner's credentials (an application's key): only the portal's session or an
   * identity token (a token with no grant) may use it, never a token that carries grants (a bot's token,
   * which could otherwise turn itself into a key of any of its owner's applications): 403 otherwise.
   */
  readonly identity?: boolean;
}

/**
 * A route guard, for a route's `onRequest`: the request must carry `Authorization: Bearer <token>` whose
 * token is valid, and (when a grant is named) grants it; then its owner's budget must admit it. 401
 * otherwise, 403 for a valid token without the grant, 429 over the budget. It runs before the body is even
 * read: a caller who may not use the route costs no parsing (a route may take a large body) and learns
 * nothing of what it takes (an anonymous bad body, malformed JSON included, is a 401, not a 400).
 */
export function requireGrant(
  gate: Gate,
  grant?: Grant,
  { noOwnerStatus = 401, session = false, identity = false }: GuardOptions = {},
): onRequestAsyncHookHandler {
  const { sessions } = gate;
  const bearer =
    noOwnerStatus === 400
      ? (request: FastifyRequest) => authenticate(gate, request).catch(noOwnerAsBadRequest)
      : (request: FastifyRequest) => authenticate(gate, request);
  const verify =
    session && sessions
      ? (request: FastifyRequest) => {
          const sessionId = request.headers.authorization === undefined ? sessionIdOf(request) : undefined;
          if (sessionId !== undefined) return authenticateSession(sessions, request, sessionId);
          return session === 'only' ? Promise.reject(noSession(request)) : bearer(request);
        }
      : bearer;
  const hint = identity ? gate.wayIn?.identity : gate.wayIn?.token;
  return guarding(grant, async function guard(request: FastifyRequest, reply: FastifyReply) {
    let principal: Principal;
    try {
      principal = await verify(request);
    } catch (error) {
      throw withHint(error, hint);
    }
    await admitted(gate, request, reply, principal);
    if (identity && !principal.session && principal.grants.size > 0) {
      throw AppError.of(ErrorKinds.IDENTITY_REQUIRED, {
        developerReason: `this route takes no token that carries grants${hint ? `. ${hint}` : ''}`,
      });
    }
    if (grant && !principal.grants.has(grant)) {
      throw AppError.of(ErrorKinds.GRANT_MISSING, {
        developerReason: `this endpoint needs the ${grant} grant`,
        grant,
      });
    }
  });
}

/**
 * The grant each guard made here asks for (none: any token of the route's kind), by the guard itself: the
 * OpenAPI document reads a route's security scopes from its guard (`guardOf`), so the two cannot differ.
 */
const guardGrants = new WeakMap<object, Grant | undefined>();

function guarding<Hook extends object>(grant: Grant | undefined, hook: Hook): Hook {
  guardGrants.set(hook, grant);
  return hook;
}

/**
 * The guard among a route's hooks (its `onRequest` or `preHandler`, a function or a list), and the grant it
 * asks for; undefined when the route has no guard (a public route).
 */
export function guardOf(...hooks: unknown[]): { readonly grant: Grant | undefined } | undefined {
  for (const hook of hooks.flat()) {
    if (typeof hook === 'function' && guardGrants.has(hook)) return { grant: guardGrants.get(hook) };
  }
  return undefined;
}

/** A request to a route that takes the portal's session alone, without one. */
const noSession = (request: FastifyRequest): AppError =>
  AppError.of(ErrorKinds.SESSION_INVALID, {
    developerReason:
      request.headers.authorization === undefined
        ? 'this route needs a sign-in session: the request carries no session cookie (sign in first)'
        : 'this route takes the sign-in session’s cookie, not a bearer token',
  });

/** A token that names no owner, answered 400 instead of 401; any other error as it is. */
function noOwnerAsBadRequest(error: unknown): never {
  if (error instanceof AppError && error.problems[0]?.kind === ErrorKinds.TOKEN_NO_OWNER)
    throw new AppError(error.problems, { cause: 'Invalid access token', status: 400 });
  throw error;
}

/**
 * A route guard for a resource that belongs to someone, for a route's `preHandler`: a valid token whose
 * owner is the path parameter `ownerParam` (declared with `SnowflakeParam`, so it arrives as a bigint, which
 * is why this guard runs after validation), or which holds `grant`; 403 otherwise.
 */
export function requireOwnerOrGrant(
  gate: Gate,
  grant: Grant,
  ownerParam: string,
): preHandlerAsyncHookHandler {
  // The owner needs no grant: the document names none (the route's description says who else may).
  return guarding(undefined, async function guard(request: FastifyRequest, reply: FastifyReply) {
    let principal: Principal;
    try {
      principal = await authenticate(gate, request);
    } catch (error) {
      throw withHint(error, gate.wayIn?.token);
    }
    const owner = (request.params as Record<string, unknown> | undefined)?.[ownerParam];
    // Without a snowflake schema the parameter is text, and every owner would be refused: a route's bug.
    if (typeof owner !== 'bigint')
      throw new Error(`route ${request.routeOptions.url}: "${ownerParam}" is not a snowflake parameter`);
    await admitted(gate, request, reply, principal);
    ensureOwnerOrHolder(principal, owner, grant);
  });
}

/** The caller of a guarded route. A route without a guard has none: that is a bug, answered as a 500. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal)
    throw new Error(`route ${request.routeOptions.url} reads a principal but has no guard`);
  return request.principal;
}

/**
 * The route guards as the app's decorators, checking requests against `gate`: `app.requireGrant`,
 * `app.requireOwnerOrGrant`, and `app.portalSecurity` (the portal's session beside the bearer token when
 * the gate takes sessions, that is when Discord sign-in is on).
 */
export const routeGuards = fp<{ gate: Gate }>(async (app: FastifyInstance, { gate }) => {
  app.decorate('requireGrant', (grant?: Grant, options?: GuardOptions) => requireGrant(gate, grant, options));
  app.decorate('requireOwnerOrGrant', (grant: Grant, ownerParam: string) =>
    requireOwnerOrGrant(gate, grant, ownerParam),
  );
  app.decorate(
    'portalSecurity',
    gate.sessions ? [{ bearerAuth: [] }, { sessionCookie: [] }] : [{ bearerAuth: [] }],
  );
});
