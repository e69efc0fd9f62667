import { createHash, createHmac, randomBytes } from 'node:crypto';
import { generateState } from 'arctic';
import type { Grant } from '../../platform/auth/grants.js';
import { hashSecret } from '../../platform/auth/secret-hash.js';
import type { SessionAuthenticator } from '../../platform/auth/session.js';
import { type Executor, inTransaction } from '../../platform/db/transactions.js';
import { AppError, ErrorKinds } from '../../platform/errors.js';
import type { DiscordClient } from '../../upstream/discord.js';
import type { IssuedToken, TokensService } from '../tokens/tokens.service.js';
import { createSessionsRepository } from './sessions.repository.js';

/** Where a signed-in browser goes when the sign-in named no page. */
export const PORTAL_HOME = '/portal/';
/**
 * A page of the portal: `/portal/` and plain path segments; nothing that could lead off the site. Each
 * segment but the last ends in `/`, so the match is linear (no backtracking on a long refused path).
 */
const PORTAL_PATH = /^\/portal\/(?:[A-Za-z0-9_-]+\/)*[A-Za-z0-9_-]*$/;
/** How long the browser has to come back from Discord. */
export const SIGN_IN_SECONDS = 600;

/** A signed-in developer, as the portal shows them. */
export interface Session {
  readonly owner: bigint;
  readonly username: string;
  readonly globalName: string | null;
  /** Whether an operator made them a reviewer (PORTAL_REVIEWERS): they approve and reject applications. */
  readonly reviewer: boolean;
  readonly expiresAt: number;
  /** What each state-changing request made with the session carries in X-CSRF-Token. */
  readonly csrfToken: string;
}

export interface SignInStart {
  /** Discord's authorization page, to send the browser to. */
  readonly url: string;
  /** The sign-in's `state`: also kept in a cookie of the browser, so that only this browser can finish it. */
  readonly state: string;
}

export interface SignInFinish {
  /** The new session's id: the cookie's value (stored only as a hash). */
  readonly sessionId: string;
  readonly returnTo: string;
  readonly maxAgeSeconds: number;
}

export interface SessionsService extends SessionAuthenticator {
  /** A new sign-in: 400 RETURN_PATH_INVALID unless `returnTo` is a page of the portal. */
  startSignIn(returnTo: string | undefined): Promise<SignInStart>;
  /**
   * The browser back from Discord: `state` must be the one this browser started with (its cookie) and
   * not used before; the code is exchanged with the PKCE verifier; then the session starts.
   */
  finishSignIn(input: { state?: string; stateCookie?: string; code?: string }): Promise<SignInFinish>;
  session(sessionId: string): Promise<Session | undefined>;
  signOut(sessionId: string): Promise<void>;
  /**
   * A token with no grant for the session's owner: it may apply for access, follow their applications and
   * manage their keys. It ends with the session: signing out revokes it and what was refreshed from it, and
   * neither it nor a refresh of it outlives the session's expiry.
   */
  identityToken(owner: bigint, sessionId: string): Promise<IssuedToken>;
  /** Deletes expired sign-ins and sessions. */
  purge(): Promise<{ attempts: number; sessions: number }>;
}

export interface SessionsSettings {
  readonly sessionTtlSeconds: number;
  /** The Discord IDs that review applications in the portal. */
  readonly reviewers: readonly bigint[];
}

export interface SessionsServiceDeps {
  readonly db: Executor;
  /**
   * A key of the service's own (derived from its signing secret): a sign-in's PKCE verifier is derived
   * from its state with it, so no verifier is ever stored.
   */
  readonly verifierKey: Buffer;
  readonly discord: DiscordClient;
  readonly tokens: Pick<TokensService, 'issue' | 'revokeKey'>;
  readonly settings: SessionsSettings;
  readonly now?: () => number;
}

/** The session's CSRF token: derived from its id (which only its browser has), so nothing more is stored. */
const csrfTokenOf = (sessionId: string): string =>
  createHash('sha256').update(`csrf:${sessionId}`).digest('base64url');
const REVIEW: Grant = 'applications:review';
/** What the identity tokens of a session are recorded as made from: ending the session ends them. */
const sourceOf = (sessionId: string): string => `session:${hashSecret(sessionId)}`;

export function createSessionsService({
  db,
  verifierKey,
  discord,
  tokens,
  settings,
  now = Date.now,
}: SessionsServiceDeps): SessionsService {
  const repository = createSessionsRepository(db);
  const reviewers = new Set(settings.reviewers);
  /** The PKCE verifier of a sign-in: 43 base64url characters (RFC 7636's minimum), from its state. */
  const verifierOf = (state: string): string =>
    createHmac('sha256', verifierKey).update(state).digest('base64url');

  const stateInvalid = (developerReason: string) =>
    AppError.of(ErrorKinds.SIGN_IN_STATE_INVALID, { developerReason });

  async function session(sessionId: string): Promise<Session | undefined> {
    const record = await repository.liveSession(hashSecret(sessionId), now());
    if (!record) return undefined;
    return {
      owner: record.owner,
      username: record.username,
      globalName: record.globalName,
      reviewer: reviewers.has(record.owner),
      expiresAt: record.expiresAt,
      csrfToken: csrfTokenOf(sessionId),
    };
  }

  return {
    async startSignIn(returnTo = PORTAL_HOME) {
      if (returnTo.length > 200 || !PORTAL_PATH.test(returnTo)) {
        throw AppError.of(ErrorKinds.RETURN_PATH_INVALID, {
          developerReason: 'return_to must be a path of the portal, such as /portal/ (no other site, no //)',
        });
      }
      const state = generateState();
      await repository.addAttempt(hashSecret(state), { returnTo, expiresAt: now() + SIGN_IN_SECONDS * 1000 });
      return { url: discord.authorizationUrl(state, verifierOf(state)).toString(), state };
    },

    async finishSignIn({ state, stateCookie, code }) {
      if (!state || !code)
        throw stateInvalid('Discord sends the browser back with code and state: both are needed');
      if (state !== stateCookie) {
        throw stateInvalid(
          'the state is not the one this browser started the sign-in with (its cookie): start the sign-in again here',
        );
      }
      const attempt = await repository.takeAttempt(hashSecret(state));
      if (!attempt) throw stateInvalid('the state was used already, or never started here');
      if (attempt.expiresAt <= now())
        throw stateInvalid(`the sign-in was started more than ${SIGN_IN_SECONDS / 60} minutes ago`);
      const user = await discord.identify(code, verifierOf(state));
      const sessionId = randomBytes(32).toString('base64url');
      const createdAt = now();
      await repository.addSession(hashSecret(sessionId), {
        owner: user.id,
        username: user.username,
        globalName: user.globalName,
        createdAt,
        expiresAt: createdAt + settings.sessionTtlSeconds * 1000,
      });
      return { sessionId, returnTo: attempt.returnTo, maxAgeSeconds: settings.sessionTtlSeconds };
    },

    session,

    async authenticateSession(sessionId) {
      const found = await session(sessionId);
      if (!found) return undefined;
      return {
        principal: {
          owner: found.owner,
          grants: new Set<Grant>(found.reviewer ? [REVIEW] : []),
          jti: 'session',
          expiresAt: found.expiresAt,
          session: true,
        },
        csrfToken: found.csrfToken,
      };
    },

    // The session ends and its tokens are revoked together; an identity token asked for at the same moment
    // is recorded before (and so revoked) or refused (identityToken holds the session's row).
    signOut: (sessionId) =>
      inTransaction(db, async (transaction) => {
        await createSessionsRepository(transaction).endSession(hashSecret(sessionId), now());
        await tokens.revokeKey(sourceOf(sessionId), { within: transaction });
      }),

    identityToken: (owner, sessionId) =>
      inTransaction(db, async (transaction) => {
        const endsAt = await createSessionsRepository(transaction).holdLiveSession(
          hashSecret(sessionId),
          now(),
        );
        // Two seconds at least: the token's times are whole seconds, and it needs one of the session's left.
        if (endsAt === undefined || endsAt - now() < 2000) {
          throw AppError.of(ErrorKinds.SESSION_INVALID, {
            developerReason: 'the portal session ended or expired: sign in again',
          });
        }
        // The token and its refreshes end with the session, however it ends.
        return tokens.issue(owner, [], { keyId: sourceOf(sessionId), within: transaction, endsAt });
      }),

    purge: () => repository.purge(now()),
  };
}
