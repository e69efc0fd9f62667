import { Type } from 'typebox';
import { failureShape } from '../../platform/http/lookup-result.js';
import { PLAYER_PATTERN } from '../../platform/player-id.js';
import { PlayerFoundSchema } from './players.schemas.js';
import { BULK_MAX_PLAYERS } from './players-bulk.service.js';

/**
 * The largest `POST /players` body: 100 dashed UUIDs take under 4 KiB; the room beyond is for whitespace
 * and escapes, and a larger body is refused (413) before it is read.
 */
export const BULK_BODY_LIMIT_BYTES = 16 * 1024;

/** A request that works as it is (the explorer's example): a username, a dashed UUID and an undashed one. */
const EXAMPLE = {
  players: ['Minikloon', '20934ef9-488c-4651-80a7-8f861586b4cf', 'ef962ec2df6e48a2ac9d6062c1b84652'],
};

export const PlayersBulkRequestSchema = Type.Object(
  {
    players: Type.Array(
      Type.String({
        pattern: PLAYER_PATTERN,
        'x-reason':
          'must be a Minecraft UUID (32 hex digits, dashed or not) or a username (1 to 16 letters, digits or _)',
        description: 'A Minecraft UUID (dashed or not, any case) or a username.',
        example: '20934ef9488c465180a78f861586b4cf',
      }),
      {
        minItems: 1,
        maxItems: BULK_MAX_PLAYERS,
        'x-reason': `must hold 1 to ${BULK_MAX_PLAYERS} players`,
        description:
          `1 to ${BULK_MAX_PLAYERS} players, each a UUID or a username; a string given twice is one result. ` +
          'Any invalid one refuses the whole request (400 naming each, up to 20).',
      },
    ),
  },
  { additionalProperties: false, examples: [EXAMPLE] },
);

/** One item: exactly the body `GET /player/{player}` answers for that player. */
const PlayerResultSchema = Type.Union([PlayerFoundSchema, failureShape('player')], {
  description:
    'What `GET /player/{player}` answers for this player, byte for byte: the player, or the result shape of its ' +
    'failure (never joined, unknown username, `throttle: true` when the upstream or your share of it is ' +
    'throttling, or the upstream failing) without its status.',
});

export const PlayersBulkResultSchema = Type.Object(
  {
    results: Type.Object(
      {},
      {
        additionalProperties: PlayerResultSchema,
        description:
          'One entry per distinct string given, keyed by it as given, in the order first given: two spellings of ' +
          'one player (a dashed and an undashed UUID, a username and its UUID) are two entries with the same ' +
          'player, fetched once.',
      },
    ),
  },
  { additionalProperties: false, description: 'Each player as `GET /player/{player}` would answer it.' },
);
