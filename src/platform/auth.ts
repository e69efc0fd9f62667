import { randomUUID } from 'node:crypto';
import type { FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { errors, type JWTPayload, jwtVerify, SignJWT } from 'jose';
import { LRUCache } from 'lru-cache';
import type { AuthConfig } from '../config.js';
import { AppError, ErrorKinds } from './errors.js';
import { parseSnowflake } from './snowflake.js';

/** Every grant a token can carry (CONTRACT.md section 3). */
export const GRANTS = [
  'player:read',
  'profiles:read',
  'ping:read',
  'ping:write',
  'messenger:log',
  'messenger:read',
  'messenger:write',
  'applications:review',
] as const;

export type Grant = (typeof GRANTS)[number];

export const isGrant = (value: string): value is Grant => (GRANTS as readonly string[]).includes(value);

/** RFC 9068's media type for JWT access tokens: a token of another kind (an ID token, say) is refused. */
const TOKEN_TYPE = 'at+jwt';
const ALGORITHM = 'HS256';
/** Distinct tokens whose verification an instance remembers (a few hundred bytes each). */
const VERIFIED_TOKENS_REMEMBERED = 10_000;

/** What a verified token says. */
export interface TokenClaims {
  readonly owner: bigint;
  readonly grants: readonly Grant[];
  readonly jti: string;
  /** Epoch seconds. */
  readonly issuedAt: number;
  /** Epoch seconds. */
  readonly expiresAt: number;
}

/** The caller of a request, once its token is verified. */
export interface Principal {
  readonly owner: bigint;
  readonly grants: ReadonlySet<Grant>;
  readonly jti: string;
}

export interface TokenCodec {
  /** Signs a new token; the jti is new. */
  sign(
    owner: bigint,
    grants: readonly Grant[],
    ttlSeconds: number,
    now?: number,
  ): Promise<{ jti: string; token: string; claims: TokenClaims }>;
  /**
   * Verifies signature, algorithm, `typ`, `iss`, `aud` and times. With `acceptExpiredForSeconds`, a token
   * that expired at most that long ago still verifies (the refresh path).
   */
  verify(token: string, options?: { acceptExpiredForSeconds?: number; now?: number }): Promise<TokenClaims>;
}

const invalid = (developerReason: string) =>
  AppError.of(ErrorKinds.TOKEN_INVALID, { developerReason, headers: bearerChallenge('invalid_token') });

/** The RFC 6750 challenge a 401 or 403 carries. */
export function bearerChallenge(
  error?: 'invalid_token' | 'insufficient_scope',
  scope?: string,
): Record<string, string> {
  const parts = ['Bearer realm="player-data-service"'];
  if (error) parts.push(`error="${error}"`);
  if (scope) parts.push(`scope="${scope}"`);
  return { 'www-authenticate': parts.join(', ') };
}

export function createTokenCodec(secret: string, settings: AuthConfig): TokenCodec {
  // Imported once: handing jose the raw bytes makes it import the key again on every call (~150 µs).
  const key = crypto.subtle.importKey(
    'raw',
    new TextEncoder().encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign', 'verify'],
  );
  const { issuer, audience } = settings;
  // Tokens that verified: the same bytes verify the same way until they expire, and checking an HS256
  // signature through WebCrypto costs ~150 µs (a thread-pool job) on every request otherwise. Expiry is
  // still checked on every use; revocation is the caller's check, on every request.
  const verified = new LRUCache<string, TokenClaims>({ max: VERIFIED_TOKENS_REMEMBERED });
  const verifyOptions = {
    algorithms: [ALGORITHM],
    issuer,
    audience,
    typ: TOKEN_TYPE,
    clockTolerance: settings.clockLeewaySeconds,
    requiredClaims: ['sub', 'scope', 'jti', 'iat', 'exp'],
  };

  return {
    async sign(owner, grants, ttlSeconds, now = Date.now()) {
      const jti = randomUUID();
      const issuedAt = Math.floor(now / 1000);
      const claims: TokenClaims = { owner, grants, jti, issuedAt, expiresAt: issuedAt + ttlSeconds };
      const token = await new SignJWT({ scope: grants.join(' ') })
        .setProtectedHeader({ alg: ALGORITHM, typ: TOKEN_TYPE })
        .setIssuer(issuer)
        .setAudience(audience)
        .setSubject(owner.toString())
        .setJti(jti)
        .setIssuedAt(claims.issuedAt)
        .setExpirationTime(claims.expiresAt)
        .sign(await key);
      return { jti, token, claims };
    },

    async verify(token, { acceptExpiredForSeconds = 0, now = Date.now() } = {}) {
      const known = verified.get(token);
      if (known && now / 1000 <= known.expiresAt + settings.clockLeewaySeconds) return known;
      try {
        const { payload } = await jwtVerify(token, await key, {
          ...verifyOptions,
          currentDate: new Date(now),
        });
        const claims = toClaims(payload);
        verified.set(token, claims);
        return claims;
      } catch (error) {
        if (!(error instanceof errors.JWTExpired)) throw toAuthError(error);
        const expiredAt = Number(error.payload.exp);
        const expiredFor = now / 1000 - expiredAt;
        if (!(expiredFor <= acceptExpiredForSeconds + settings.clockLeewaySeconds)) {
          throw AppError.of(ErrorKinds.TOKEN_EXPIRED, {
            developerReason:
              acceptExpiredForSeconds > 0
                ? `the token expired at ${new Date(expiredAt * 1000).toISOString()}, beyond the refresh window`
                : `the token expired at ${new Date(expiredAt * 1000).toISOString()}; refresh it at POST /auth/refresh`,
            headers: bearerChallenge('invalid_token'),
          });
        }
        // Verify everything again as of the moment the token was last valid.
        const { payload } = await jwtVerify(token, await key, {
          ...verifyOptions,
          currentDate: new Date((expiredAt - 1) * 1000),
        }).catch((again: unknown) => {
          throw toAuthError(again);
        });
        return toClaims(payload);
      }
    },
  };
}

function toClaims(payload: JWTPayload): TokenClaims {
  const owner = parseSnowflake(payload.sub);
  if (owner === undefined) throw invalid('the token subject is not an owner ID');
  if (typeof payload.scope !== 'string') throw invalid('the token scope is not a string');
  const grants = payload.scope.split(' ').filter(Boolean);
  if (!grants.every(isGrant)) throw invalid('the token carries an unknown grant');
  return {
    owner,
    grants,
    jti: String(payload.jti),
    issuedAt: Number(payload.iat),
    expiresAt: Number(payload.exp),
  };
}

/** jose's verdicts as 401s that say what was wrong, but never echo the token. */
function toAuthError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (error instanceof errors.JWTClaimValidationFailed)
    return invalid(`the token's "${error.claim}" claim is not accepted`);
  if (error instanceof errors.JOSEAlgNotAllowed) return invalid(`tokens must be signed with ${ALGORITHM}`);
  if (error instanceof errors.JWSSignatureVerificationFailed)
    return invalid('the token signature does not verify');
  if (error instanceof errors.JOSEError) return invalid('the token is not a well-formed JWT');
  throw error;
}

/** Answers "is this bearer token good right now?": signature and claims, and the token's record. */
export interface Authenticator {
  authenticate(token: string): Promise<Principal>;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller; set by the requireGrant guard. */
    principal?: Principal;
  }
}

const BEARER = /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i;

/**
 * A route guard: the request must carry `Authorization: Bearer <token>` whose token is valid, and (when a
 * grant is named) grants it. 401 otherwise, 403 for a valid token without the grant.
 */
export function requireGrant(authenticator: Authenticator, grant?: Grant): preHandlerAsyncHookHandler {
  return async function guard(request: FastifyRequest) {
    const header = request.headers.authorization;
    if (!header) {
      throw AppError.of(ErrorKinds.TOKEN_MISSING, {
        developerReason: 'send the token in an Authorization: Bearer <token> header',
        headers: bearerChallenge(),
      });
    }
    const token = BEARER.exec(header)?.[1];
    if (!token) throw invalid('the Authorization header must be "Bearer <token>"');
    const principal = await authenticator.authenticate(token);
    if (grant && !principal.grants.has(grant)) {
      throw AppError.of(ErrorKinds.GRANT_MISSING, {
        developerReason: `this endpoint needs the ${grant} grant`,
        headers: bearerChallenge('insufficient_scope', grant),
      });
    }
    request.principal = principal;
  };
}
