import type { AppError, ErrorName } from '../errors.js';

/** The RFC 6750 challenge of a 401 or 403, as `WWW-Authenticate` carries it. */
export function bearerChallenge(error?: 'invalid_token' | 'insufficient_scope', scope?: string): string {
  const parts = ['Bearer realm="player-data-service"'];
  if (error) parts.push(`error="${error}"`);
  if (scope) parts.push(`scope="${scope}"`);
  return parts.join(', ');
}

/**
 * The challenge's `error` for each kind of refusal: a credential that is not acceptable (`invalid_token`),
 * or one that does not reach what was asked (`insufficient_scope`). A kind not named here says none: no
 * credential was given (`TOKEN_MISSING`), or what was refused is the portal's session, not a bearer token.
 */
const CHALLENGE_ERRORS: Partial<Record<ErrorName, 'invalid_token' | 'insufficient_scope'>> = {
  TOKEN_INVALID: 'invalid_token',
  TOKEN_EXPIRED: 'invalid_token',
  TOKEN_REVOKED: 'invalid_token',
  TOKEN_REUSED: 'invalid_token',
  TOKEN_NO_OWNER: 'invalid_token',
  KEY_INVALID: 'invalid_token',
  GRANT_MISSING: 'insufficient_scope',
  NOT_RESOURCE_OWNER: 'insufficient_scope',
  IDENTITY_REQUIRED: 'insufficient_scope',
  NOT_APPLICATION_OWNER: 'insufficient_scope',
  OWN_APPLICATION_REVIEW: 'insufficient_scope',
  OPERATOR_ONLY_GRANT: 'insufficient_scope',
};

/**
 * The `WWW-Authenticate` of an error's answer: every 401 and 403 carries the challenge, its `error` told by
 * the kind of the error's first problem, its `scope` by the grant the error names (a refusal's); undefined
 * for any other status. Those who throw say what was refused; this is how HTTP says it.
 */
export function challengeOf(error: AppError): string | undefined {
  if (error.status !== 401 && error.status !== 403) return undefined;
  const kind = error.problems[0]?.kind.name;
  const challenge = kind === undefined ? undefined : CHALLENGE_ERRORS[kind];
  return bearerChallenge(challenge, challenge === 'insufficient_scope' ? error.grant : undefined);
}
