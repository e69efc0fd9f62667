import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { parseCookie, stringifySetCookie } from 'cookie';
import type { FastifyReply } from 'fastify';
import { principalOf } from '../../platform/auth/route-guard.js';
import { SESSION_COOKIE, sessionIdOf } from '../../platform/auth/session.js';
import { TokenPairSchema, tokenPairOf } from '../../platform/auth/token-pair.js';
import { errorResponses } from '../../platform/error-response.js';
import { RATE_LIMIT_HEADERS } from '../../platform/http/rate-limit-headers.js';
import {
  emptyDoc,
  type HeaderDocs,
  NO_STORE_HEADERS,
  redirectDoc,
  responseDoc,
  withHeaders,
} from '../../platform/http/response-docs.js';
import { WorkCost } from '../../platform/limits/work-budget.js';
import { CallbackQuery, LoginQuery, SessionSchema } from './portal.schemas.js';
import { PORTAL_HOME, type SessionsService, SIGN_IN_SECONDS } from './sessions.service.js';

/** The cookie that ties a sign-in to the browser that started it (login CSRF), for the callback only. */
const STATE_COOKIE = 'pds_sign_in';
const CALLBACK_PATH = '/auth/discord/callback';
const TAGS = ['Auth'];
const SET_COOKIE: HeaderDocs = {
  'Set-Cookie': {
    description: 'The sign-in’s state cookie, or the session cookie (and the spent state cookie cleared).',
    schema: { type: 'string' },
  },
};
/** A redirect of the sign-in, which no cache may keep (`redirect` below). */
const REDIRECT_HEADERS: HeaderDocs = {
  ...SET_COOKIE,
  'Cache-Control': {
    description: 'A sign-in redirect is never kept by a cache.',
    schema: { type: 'string', enum: ['no-store'] },
    required: true,
  },
  ...RATE_LIMIT_HEADERS,
};
/** The callback's errors: the state cookie is spent (cleared) when it was this sign-in's, whatever comes next. */
const STATE_CLEARED: HeaderDocs = {
  'Set-Cookie': {
    description:
      'The sign-in’s state cookie cleared when it holds this sign-in’s state: it is spent. A cookie of another ' +
      'sign-in (started later in the same browser) is left for it.',
    schema: { type: 'string', pattern: `^${STATE_COOKIE}=;` },
  },
};
/** The portal's own routes: its session, never a bearer token. */
const SESSION = [{ sessionCookie: [] }];

export interface SignInSettings {
  /** Cookies say Secure (sent over HTTPS only): in production. */
  readonly secureCookies: boolean;
  /** Sign-ins started and finished per minute and client address (each writes or takes a row). */
  readonly rateLimitPerMinute: number;
}

/**
 * Signing in with Discord (authorization code with PKCE and `state`), the session it starts (an HttpOnly,
 * SameSite=Lax cookie, kept server-side so that it can be ended), signing out, and an identity token for
 * the signed-in developer. Registered only when Discord sign-in is configured: otherwise these are 404.
 */
export const signInRoutes =
  (
    sessions: SessionsService,
    { secureCookies, rateLimitPerMinute }: SignInSettings,
  ): FastifyPluginAsyncTypebox =>
  async (app) => {
    const limited = { addressLimitPerMinute: rateLimitPerMinute };
    const cookie = (name: string, value: string, maxAge: number, path = '/') =>
      stringifySetCookie({
        name,
        value,
        httpOnly: true,
        sameSite: 'lax',
        secure: secureCookies,
        path,
        maxAge,
      });
    const redirect = (reply: FastifyReply, location: string) =>
      reply.code(302).header('location', location).header('cache-control', 'no-store').send();
    const signedOut = (reply: FastifyReply) =>
      reply
        .code(204)
        .header('set-cookie', cookie(SESSION_COOKIE, '', 0))
        .send();

    app.get(
      '/auth/discord/login',
      {
        config: limited,
        schema: {
          tags: TAGS,
          operationId: 'signInWithDiscord',
          summary: 'Sign in to the developer portal with Discord',
          description:
            "Sends the browser to Discord's authorization page (authorization code with PKCE S256 and a state tied to " +
            'this browser by a cookie). `return_to`, a page of the portal, is where the browser lands once signed in.',
          security: [],
          querystring: LoginQuery,
          response: {
            302: redirectDoc('To Discord, to sign in.', REDIRECT_HEADERS),
            ...withHeaders(errorResponses(400, 429), RATE_LIMIT_HEADERS),
          },
        },
      },
      async (request, reply) => {
        const start = await sessions.startSignIn(request.query.return_to);
        reply.header('set-cookie', cookie(STATE_COOKIE, start.state, SIGN_IN_SECONDS, CALLBACK_PATH));
        return redirect(reply, start.url);
      },
    );

    app.get(
      CALLBACK_PATH,
      {
        config: limited,
        schema: {
          tags: TAGS,
          operationId: 'discordCallback',
          summary: 'Where Discord sends the browser back',
          description:
            'Checks `state` against the one this browser started with (once), exchanges the code with its PKCE ' +
            'verifier, asks Discord who signed in, and starts a session: the `pds_session` cookie (HttpOnly, ' +
            'SameSite=Lax). A refusal on Discord (`error`) goes back to the portal.',
          security: [],
          querystring: CallbackQuery,
          response: {
            302: redirectDoc(
              'Signed in (to the portal page the sign-in started from), or refused on Discord.',
              REDIRECT_HEADERS,
            ),
            ...withHeaders(errorResponses(429), RATE_LIMIT_HEADERS),
            ...withHeaders(errorResponses(400, 500, 502, 503), { ...STATE_CLEARED, ...RATE_LIMIT_HEADERS }),
          },
        },
      },
      async (request, reply) => {
        const { code, state, error } = request.query;
        const stateCookie = parseCookie(request.headers.cookie ?? '')[STATE_COOKIE];
        // This sign-in's state cookie is spent, whatever comes next. Another's (a sign-in started later in
        // another tab, which replaced this one's cookie) stays, so that one can still finish.
        if (stateCookie !== undefined && stateCookie === state)
          reply.header('set-cookie', cookie(STATE_COOKIE, '', 0, CALLBACK_PATH));
        if (error !== undefined) return redirect(reply, `${PORTAL_HOME}?sign_in=denied`);
        const finished = await sessions.finishSignIn({
          ...(state === undefined ? {} : { state }),
          ...(code === undefined ? {} : { code }),
          ...(stateCookie === undefined ? {} : { stateCookie }),
        });
        // Fastify adds a second Set-Cookie beside the first.
        reply.header('set-cookie', cookie(SESSION_COOKIE, finished.sessionId, finished.maxAgeSeconds));
        return redirect(reply, finished.returnTo);
      },
    );

    app.get(
      '/auth/session',
      {
        schema: {
          tags: TAGS,
          operationId: 'getSession',
          summary: 'Who is signed in to the portal, and the session’s CSRF token',
          description:
            'Whether this browser is signed in (the session cookie) and, if so, who, whether they review ' +
            'applications, and the CSRF token that every state-changing request made with the session carries in ' +
            '`X-CSRF-Token`. Signed out is a 200 too (`signed_in: false`): the portal asks on every load.',
          security: [],
          response: { 200: responseDoc(SessionSchema, { headers: NO_STORE_HEADERS }) },
        },
      },
      async (request, reply) => {
        reply.header('cache-control', 'no-store');
        const sessionId = request.headers.authorization === undefined ? sessionIdOf(request) : undefined;
        const found = sessionId === undefined ? undefined : await sessions.session(sessionId);
        if (!found) return { signed_in: false as const };
        return {
          signed_in: true as const,
          owner: found.owner,
          username: found.username,
          global_name: found.globalName,
          reviewer: found.reviewer,
          expires_at: new Date(found.expiresAt).toISOString(),
          csrf_token: found.csrfToken,
        };
      },
    );

    app.post(
      '/auth/logout',
      {
        onRequest: app.requireGrant(undefined, { session: 'only' }),
        schema: {
          tags: TAGS,
          operationId: 'signOut',
          summary: 'Sign out of the developer portal',
          description:
            'Ends the session (server-side: the cookie opens nothing from then on) and clears its cookie.',
          security: SESSION,
          response: {
            204: emptyDoc('Signed out.', {
              'Set-Cookie': {
                description: 'The session cookie cleared.',
                schema: { type: 'string', pattern: `^${SESSION_COOKIE}=;` },
                required: true,
              },
            }),
            ...errorResponses(401, 403),
          },
        },
      },
      async (request, reply) => {
        await sessions.signOut(sessionIdOf(request) ?? '');
        return signedOut(reply);
      },
    );

    app.post(
      '/auth/session/token',
      {
        onRequest: app.requireGrant(undefined, { session: 'only' }),
        config: { ...limited, workCost: WorkCost.write },
        schema: {
          tags: TAGS,
          operationId: 'issueIdentityToken',
          summary: 'An identity token for the signed-in developer',
          description:
            'A bearer token with no grant, for the signed-in developer: it may apply for access ' +
            '(POST /admin/developer/applications), follow their own applications and manage their keys, from a ' +
            'script or the API explorer. Signing out revokes it (and what was refreshed from it). Limited per ' +
            'client address (RateLimit policy "address").',
          security: SESSION,
          response: withHeaders(
            {
              200: responseDoc(TokenPairSchema, { headers: NO_STORE_HEADERS }),
              ...errorResponses(401, 403, 429),
            },
            RATE_LIMIT_HEADERS,
          ),
        },
      },
      async (request, reply) => {
        const { owner } = principalOf(request);
        reply.header('cache-control', 'no-store');
        return tokenPairOf(await sessions.identityToken(owner, sessionIdOf(request) ?? ''));
      },
    );
  };
