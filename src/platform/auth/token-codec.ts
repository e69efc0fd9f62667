import { randomUUID } from 'node:crypto';
import { errors, type JWTPayload, jwtVerify, SignJWT } from 'jose';
import { LRUCache } from 'lru-cache';
import { AppError, ErrorKinds } from '../errors.js';
import { parseSnowflake } from '../snowflake.js';
import { invalidToken } from './auth-errors.js';
import { type Grant, isGrant } from './grants.js';

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

/** What the codec needs of the configuration. */
export interface TokenCodecSettings {
  readonly issuer: string;
  readonly audience: string;
  /** Clock skew tolerated on `exp` and `iat`. */
  readonly clockLeewaySeconds: number;
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
   * The token of these claims: the same claims give the same token, byte for byte (HS256 is
   * deterministic), so a token issued before can be given again from its record, which never holds it.
   */
  signClaims(claims: TokenClaims): Promise<string>;
  /**
   * Verifies signature, algorithm, `typ`, `iss`, `aud` and times. With `acceptExpiredForSeconds`, a token
   * that expired at most that long ago still verifies (the refresh path).
   */
  verify(token: string, options?: { acceptExpiredForSeconds?: number; now?: number }): Promise<TokenClaims>;
}

export function createTokenCodec(secret: string, settings: TokenCodecSettings): TokenCodec {
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
    // `sub` is checked after everything else (toClaims): a token that names no owner is told apart.
    requiredClaims: ['scope', 'jti', 'iat', 'exp'],
  };

  const signClaims = async (claims: TokenClaims): Promise<string> =>
    new SignJWT({ scope: claims.grants.join(' ') })
      .setProtectedHeader({ alg: ALGORITHM, typ: TOKEN_TYPE })
      .setIssuer(issuer)
      .setAudience(audience)
      .setSubject(claims.owner.toString())
      .setJti(claims.jti)
      .setIssuedAt(claims.issuedAt)
      .setExpirationTime(claims.expiresAt)
      .sign(await key);

  return {
    async sign(owner, grants, ttlSeconds, now = Date.now()) {
      const jti = randomUUID();
      const issuedAt = Math.floor(now / 1000);
      const claims: TokenClaims = { owner, grants, jti, issuedAt, expiresAt: issuedAt + ttlSeconds };
      return { jti, token: await signClaims(claims), claims };
    },

    signClaims,

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

/** The jti this service writes (`randomUUID()`): anything else was not issued here, and is never looked up. */
const ISSUED_JTI = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function toClaims(payload: JWTPayload): TokenClaims {
  if (typeof payload.jti !== 'string' || !ISSUED_JTI.test(payload.jti))
    throw invalidToken('the token id (jti) is not one this service issues');
  if (typeof payload.scope !== 'string') throw invalidToken('the token scope is not a string');
  const grants = payload.scope.split(' ').filter(Boolean);
  if (!grants.every(isGrant)) throw invalidToken('the token carries an unknown grant');
  // Last: a token that is right in every other way but names no owner is told apart (TOKEN_NO_OWNER).
  const owner = parseSnowflake(payload.sub);
  if (owner === undefined) throw noOwner();
  return {
    owner,
    grants,
    jti: payload.jti,
    issuedAt: Number(payload.iat),
    expiresAt: Number(payload.exp),
  };
}

/**
 * A token, signed by this service's key, whose subject is missing or not an owner ID: 401 like any token that
 * is not acceptable, except where a route says otherwise (the interface's endpoint 1, creating an application, answers it with 400).
 */
const noOwner = (): AppError =>
  AppError.of(ErrorKinds.TOKEN_NO_OWNER, {
    developerReason: 'the token subject (sub) must be the owner ID, a Discord ID as a decimal string',
  });

/** jose's verdicts as 401s that say what was wrong, but never echo the token. */
function toAuthError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (error instanceof errors.JWTClaimValidationFailed)
    return invalidToken(`the token's "${error.claim}" claim is not accepted`);
  if (error instanceof errors.JOSEAlgNotAllowed)
    return invalidToken(`tokens must be signed with ${ALGORITHM}`);
  if (error instanceof errors.JWSSignatureVerificationFailed)
    return invalidToken('the token signature does not verify');
  if (error instanceof errors.JOSEError) return invalidToken('the token is not a well-formed JWT');
  throw error;
}
