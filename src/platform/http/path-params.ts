import { Type } from 'typebox';
import { PLAYER_PATTERN } from '../player-id.js';
import { SnowflakeParam } from '../snowflake.js';

/**
 * The path parameters several modules share, as route schemas. Normalise a `{player}` with
 * `parsePlayerRef` (platform/player-id.ts); a `{snowflake}` reaches the handler as an exact `bigint`.
 */
export const PlayerParams = Type.Object({
  player: Type.String({
    pattern: PLAYER_PATTERN,
    'x-reason':
      'must be a Minecraft UUID (32 hex digits, dashed or not) or a username (1 to 16 letters, digits or _)',
    description: 'A Minecraft UUID (dashed or not, any case) or a username.',
    example: '20934ef9488c465180a78f861586b4cf',
  }),
});

export const SnowflakeParams = Type.Object({ snowflake: SnowflakeParam() });
