import { timingSafeEqual } from 'node:crypto';
import { parseCookie } from 'cookie';
import type { FastifyRequest } from 'fastify';
import { AppError, ErrorKinds } from '../errors.js';
import type { Principal } from './principal.js';

/** The cookie of a developer's sign-in session (the portal's): HttpOnly, SameSite=Lax, Path=/. */
export const SESSION_COOKIE = 'pds_session';
/** Where a request made with the session cookie carries the session's CSRF token. */
export const CSRF_HEADER = 'x-csrf-token';

/** A live sign-in session, as a route guard sees it. */
export interface SessionPrincipal {
  readonly principal: Principal;
  /** What every state-changing request made with the session must carry in `X-CSRF-Token`. */
  readonly csrfToken: string;
}

/** Answers "is this session cookie a live session?". */
export interface SessionAuthenticator {
  authenticateSession(sessionId: string): Promise<SessionPrincipal | undefined>;
}

/** The session id in the request's cookies, if any. */
export function sessionIdOf(request: FastifyRequest): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  return parseCookie(header)[SESSION_COOKIE] || undefined;
}

/** Safe methods change nothing: every other request made with the session cookie needs the CSRF token. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The principal of the request's sign-in session (the cookie, never a bearer token): 401 when the
 * session has ended, 403 when a state-changing request lacks the session's CSRF token.
 */
export async function authenticateSession(
  sessions: SessionAuthenticator,
  request: FastifyRequest,
  sessionId: string,
): Promise<Principal> {
  const found = await sessions.authenticateSession(sessionId);
  if (!found) {
    throw AppError.of(ErrorKinds.SESSION_INVALID, {
      developerReason:
        'the session cookie names no live session (it ended, expired or never was): sign in again',
    });
  }
  if (!SAFE_METHODS.has(request.method) && !sameText(request.headers[CSRF_HEADER], found.csrfToken)) {
    throw AppError.of(ErrorKinds.CSRF_TOKEN_INVALID, {
      developerReason: `a ${request.method} made with the session cookie needs the session's CSRF token in ${CSRF_HEADER}`,
    });
  }
  return found.principal;
}

function sameText(given: string | string[] | undefined, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
