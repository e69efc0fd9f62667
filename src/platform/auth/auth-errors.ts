import { AppError, ErrorKinds } from '../errors.js';

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

/** A 401 for a token that is not acceptable, saying why (never echoing the token). */
export const invalidToken = (developerReason: string): AppError =>
  AppError.of(ErrorKinds.TOKEN_INVALID, { developerReason, headers: bearerChallenge('invalid_token') });
