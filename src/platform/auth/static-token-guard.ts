import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { AppError, ErrorKinds } from '../errors.js';
import { invalidToken } from './auth-errors.js';

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

/**
 * A route guard for one fixed secret (a scraper's token, say), sent as `Authorization: Bearer <secret>`.
 * The comparison takes the same time whatever the guess (digests of equal length, compared in constant
 * time), so the secret cannot be found a byte at a time. `setting` names where the deployment set it
 * (`METRICS_TOKEN`), for the 401 of a request without it.
 */
export function requireStaticBearer(secret: string, setting: string): onRequestAsyncHookHandler {
  const expected = digest(secret);
  return async function guard(request: FastifyRequest) {
    const header = request.headers.authorization;
    if (!header) {
      throw AppError.of(ErrorKinds.TOKEN_MISSING, {
        reason: 'This endpoint needs the token its deployment set for it.',
        developerReason: `send ${setting}, the token this deployment set for it, in an Authorization: Bearer <token> header`,
      });
    }
    const given = /^Bearer +(\S+) *$/i.exec(header)?.[1];
    if (!given || !timingSafeEqual(digest(given), expected))
      throw invalidToken("the token is not this endpoint's");
  };
}
