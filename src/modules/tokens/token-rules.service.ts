import type { TokenClaims } from '../../platform/auth/token-codec.js';
import type { TokenRecord } from './tokens.repository.js';

/*
 * The rules a token is held to against its record, with no I/O: the tokens service applies them.
 */

/**
 * Whether a token's claims are those its record was issued with: owner, grants (the scope is written in the
 * order the record keeps them), issue and expiry times.
 */
export function claimsMatch(claims: TokenClaims, record: TokenRecord): boolean {
  return (
    claims.owner === record.owner &&
    claims.issuedAt * 1000 === record.issuedAt &&
    claims.expiresAt * 1000 === record.expiresAt &&
    claims.grants.join(' ') === record.grants.join(' ')
  );
}

/**
 * A lifetime of `ttlSeconds`, as of `at` (epoch ms), cut to the chain's end if it has one (a token's times
 * are whole seconds: it expires at or before the end); 0 when less than a second of the chain is left.
 */
export const lifetimeWithin = (ttlSeconds: number, chainEndsAt: number | null, at: number): number =>
  chainEndsAt === null
    ? ttlSeconds
    : Math.max(0, Math.min(ttlSeconds, Math.floor(chainEndsAt / 1000) - Math.floor(at / 1000)));
