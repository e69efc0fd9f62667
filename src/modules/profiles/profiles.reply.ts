import type { FastifyReply } from 'fastify';
import { sendFound, sendNotFound, UNKNOWN_USERNAME_CAUSE } from '../../platform/http/lookup-result.js';
import type { ProfilesLookup } from './profiles.service.js';

/** A profiles lookup as ProfilesResult: 200 with the cached body as it is, or 404 in the result shape. */
export function sendProfilesLookup(
  reply: FastifyReply,
  lookup: ProfilesLookup,
): FastifyReply | Promise<FastifyReply> {
  if (lookup.kind === 'found') return sendFound(reply, lookup.profiles);
  return sendNotFound(reply, 'profiles', UNKNOWN_USERNAME_CAUSE, lookup.freshness);
}
