import { Type } from 'typebox';
import { refTo } from '../../platform/open-object.js';
import { HypixelPlayerSchema } from './hypixel-player.schemas.js';

/** A found player: the cached PlayerResult body as it is sent (players.service.ts keeps it so). */
export const PlayerFoundSchema = Type.Object(
  {
    success: Type.Literal(true),
    throttle: Type.Literal(false),
    player: refTo(HypixelPlayerSchema),
  },
  {
    additionalProperties: false,
    description: 'The player, from the cache while fresh, from the upstream, or a stale copy standing in.',
  },
);

export const PLAYER_NOT_FOUND =
  'No such player: no Minecraft player has this username, or this player has never joined Hypixel.';
