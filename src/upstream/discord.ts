import { ArcticFetchError, CodeChallengeMethod, OAuth2Client, OAuth2RequestError } from 'arctic';
import { AppError, ErrorKinds } from '../platform/errors.js';
import type { Logger } from '../platform/logger.js';
import { parseSnowflake } from '../platform/snowflake.js';

/** What the service knows of a Discord user once they signed in. */
export interface DiscordUser {
  /** The Discord ID: the owner of everything the developer does here. */
  readonly id: bigint;
  readonly username: string;
  /** The display name, when they set one. */
  readonly globalName: string | null;
}

export interface DiscordSettings {
  readonly clientId: string;
  readonly clientSecret: string;
  /** Where Discord sends the browser back: this service's `/auth/discord/callback`, as registered. */
  readonly redirectUri: string;
  /** Discord's API base (`https://discord.com/api`); its `/oauth2/authorize`, `/oauth2/token`, `/users/@me`. */
  readonly apiUrl: string;
  /** How long one call to Discord may take. */
  readonly timeoutMs: number;
}

export interface DiscordClient {
  /** Where to send the browser to sign in: the authorization code flow with PKCE (S256) and `state`. */
  authorizationUrl(state: string, codeVerifier: string): URL;
  /**
   * Exchanges the code Discord gave the browser (with the verifier of its challenge), and asks who signed
   * in. 400 SIGN_IN_REJECTED when Discord refuses the code (used, expired, wrong verifier); 502
   * DISCORD_UNAVAILABLE when it cannot be reached, answers nonsense, or refuses this service's own client.
   */
  identify(code: string, codeVerifier: string): Promise<DiscordUser>;
}

/**
 * Discord's answers to a code exchange that say this service is set up wrong, not that the code is bad:
 * its client ID or secret (`invalid_client`, `unauthorized_client`), or what it asks for. No sign-in can
 * succeed until an operator fixes the configuration, so they are the service's failure (502), logged.
 */
const MISCONFIGURED = new Set([
  'invalid_client',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
]);

/** Only the user's identity is asked for: their ID and names. */
const SCOPES = ['identify'];

/**
 * Discord's OAuth2, through arctic's generic client (its Discord provider has the endpoints built in; the
 * tests put a fake Discord on 127.0.0.1 in their place).
 */
export function createDiscordClient(settings: DiscordSettings, log: Pick<Logger, 'error'>): DiscordClient {
  const oauth = new OAuth2Client(settings.clientId, settings.clientSecret, settings.redirectUri);
  const endpoint = (path: string) => `${settings.apiUrl}${path}`;

  async function accessToken(code: string, codeVerifier: string): Promise<string> {
    try {
      const tokens = await withTimeout(
        oauth.validateAuthorizationCode(endpoint('/oauth2/token'), code, codeVerifier),
        settings.timeoutMs,
      );
      return tokens.accessToken();
    } catch (error) {
      if (error instanceof OAuth2RequestError && MISCONFIGURED.has(error.code)) {
        log.error(
          { code: error.code },
          'Discord refused the service’s own OAuth2 client at the code exchange: check DISCORD_CLIENT_ID and DISCORD_CLIENT_SECRET',
        );
        throw unavailable(
          `Discord refused this service's OAuth2 client (${error.code}): its operator must fix its configuration`,
        );
      }
      if (error instanceof OAuth2RequestError) {
        throw AppError.of(ErrorKinds.SIGN_IN_REJECTED, {
          developerReason: `Discord refused the authorization code (${error.code}): it was used already, has expired, or its PKCE verifier does not match`,
        });
      }
      throw unavailable(
        error instanceof ArcticFetchError
          ? 'Discord could not be reached'
          : 'Discord answered the code exchange unexpectedly',
      );
    }
  }

  return {
    authorizationUrl: (state, codeVerifier) =>
      oauth.createAuthorizationURLWithPKCE(
        endpoint('/oauth2/authorize'),
        state,
        CodeChallengeMethod.S256,
        codeVerifier,
        SCOPES,
      ),

    async identify(code, codeVerifier) {
      const token = await accessToken(code, codeVerifier);
      let body: unknown;
      try {
        const response = await fetch(endpoint('/users/@me'), {
          headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
          signal: AbortSignal.timeout(settings.timeoutMs),
        });
        if (response.status !== 200) throw new Error(`users/@me answered ${response.status}`);
        body = await response.json();
      } catch {
        throw unavailable('Discord did not say who signed in');
      }
      const user = (body ?? {}) as { id?: unknown; username?: unknown; global_name?: unknown };
      const id = typeof user.id === 'string' ? parseSnowflake(user.id) : undefined;
      if (id === undefined || typeof user.username !== 'string')
        throw unavailable('Discord described the user in an unexpected shape');
      const username = shownText(user.username);
      if (!username) throw unavailable('Discord gave the user no username');
      const globalName = typeof user.global_name === 'string' ? shownText(user.global_name) : '';
      return { id, username, globalName: globalName || null };
    },
  };
}

/**
 * Control characters (C0, C1), Unicode's line and paragraph separators, and the invisible bidirectional
 * controls, which would reorder what follows.
 */
const UNSHOWABLE = /[\p{Cc}\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;
const NAME_CHARACTERS = 64;

/** A name as the portal shows it: without unshowable characters, at most 64 characters (whole ones). */
const shownText = (text: string): string =>
  Array.from(text.replace(UNSHOWABLE, '')).slice(0, NAME_CHARACTERS).join('');

const unavailable = (developerReason: string): AppError =>
  AppError.of(ErrorKinds.DISCORD_UNAVAILABLE, { developerReason });

/** The promise, or a rejection once `ms` have passed (arctic's requests take no signal). */
function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
