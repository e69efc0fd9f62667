import type { FastifyReply } from 'fastify';
import { sendFound, sendNotFound, UNKNOWN_USERNAME_CAUSE } from '../../platform/http/lookup-result.js';
import type { PlayerLookup } from './players.service.js';

const NEVER_JOINED_CAUSE = 'This player has never joined Hypixel';

/** A player lookup as PlayerResult: 200 with the cached body as it is, or 404 in the result shape. */
export function sendPlayerLookup(
  reply: FastifyReply,
  lookup: PlayerLookup,
): FastifyReply | Promise<FastifyReply> {
  switch (lookup.kind) {
    case 'found':
      return sendFound(reply, lookup.player);
    case 'never_joined':
      return sendNotFound(reply, 'player', NEVER_JOINED_CAUSE, lookup.freshness);
    case 'unknown_name':
      return sendNotFound(reply, 'player', UNKNOWN_USERNAME_CAUSE, lookup.freshness);
  }
}
