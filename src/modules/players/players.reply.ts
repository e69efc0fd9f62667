import type { FastifyReply } from 'fastify';
import {
  failureBody,
  sendFound,
  sendNotFound,
  UNKNOWN_USERNAME_CAUSE,
} from '../../platform/http/lookup-result.js';
import type { PlayerLookup } from './players.service.js';

const NEVER_JOINED_CAUSE = 'This player has never joined Hypixel';
/** The 404 bodies, as `sendNotFound` writes them, made once (the items of a bulk read). */
const NEVER_JOINED_BODY = failureBody('player', NEVER_JOINED_CAUSE);
const UNKNOWN_USERNAME_BODY = failureBody('player', UNKNOWN_USERNAME_CAUSE);

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

/** The body `sendPlayerLookup` sends for a lookup, as bytes: the cached body of a found player as it is. */
export function playerResultBody(lookup: PlayerLookup): Buffer {
  switch (lookup.kind) {
    case 'found':
      return lookup.player.body;
    case 'never_joined':
      return NEVER_JOINED_BODY;
    case 'unknown_name':
      return UNKNOWN_USERNAME_BODY;
  }
}
