import { AppError, ErrorKinds } from '../errors.js';
import type { Grant } from './grants.js';

/** The caller of a request, once its token is verified. */
export interface Principal {
  readonly owner: bigint;
  readonly grants: ReadonlySet<Grant>;
  readonly jti: string;
  /** When the token (or the sign-in session) expires (epoch ms). */
  readonly expiresAt: number;
  /** Set when the caller is a developer signed in to the portal (a session cookie), not a bearer token. */
  readonly session?: true;
}

/** Answers "is this bearer token good right now?": signature and claims, and the token's record. */
export interface Authenticator {
  authenticate(token: string): Promise<Principal>;
}

/** Whether the principal owns the resource (its owner is `owner`) or holds `grant`, which opens anyone's. */
const isOwnerOrHolder = (principal: Principal, owner: bigint | undefined, grant: Grant): boolean =>
  principal.grants.has(grant) || (owner !== undefined && principal.owner === owner);

/** Throws 403 NOT_RESOURCE_OWNER unless the principal owns the resource or holds `grant`. */
export function ensureOwnerOrHolder(principal: Principal, owner: bigint | undefined, grant: Grant): void {
  if (isOwnerOrHolder(principal, owner, grant)) return;
  throw AppError.of(ErrorKinds.NOT_RESOURCE_OWNER, {
    developerReason: `only the resource's owner, or a token with the ${grant} grant, may do this`,
    grant,
  });
}
