import { type TSchema, Type } from 'typebox';
import { errorResponses } from '../../platform/error-response.js';
import { PLAYER_PATTERN } from './players.service.js';

export const PlayerParamsSchema = Type.Object({
  player: Type.String({
    pattern: PLAYER_PATTERN,
    'x-reason':
      'must be a Minecraft UUID (32 hex digits, dashed or not) or a username (1 to 16 letters, digits or _)',
    description: 'A Minecraft UUID (dashed or not, any case) or a username.',
    example: '20934ef9488c465180a78f861586b4cf',
  }),
});

const resultShape = (field: string, value: ReturnType<typeof Type.Unknown>, description: string) =>
  Type.Object(
    {
      success: Type.Boolean(),
      cause: Type.Optional(Type.String({ description: 'Why it failed, when it did.' })),
      throttle: Type.Boolean({
        description:
          'True when the upstream (or its rate budget) is throttling requests: retry after Retry-After.',
      }),
      [field]: value,
    },
    { description },
  );

export const PlayerResultSchema = resultShape(
  'player',
  Type.Unknown({ description: 'The Hypixel player object as the upstream sent it; null on failure.' }),
  'PlayerResult. Success: 200 `{success: true, throttle: false, player}`. Failures in this shape: 404 unknown username or a ' +
    'player who never joined; 429 throttled (with Retry-After); 502 upstream error or garbage; 503 upstream unreachable; ' +
    '504 upstream timeout. Headers: X-Cache (HIT, MISS, STALE), Age, Cache-Control.',
);

export const ProfilesResultSchema = resultShape(
  'profiles',
  Type.Unknown({
    description: "The player's SkyBlock profiles as the upstream sent them ([] for none); null on failure.",
  }),
  'ProfilesResult, with the failures and headers of PlayerResult.',
);

/** Every answer of an upstream-backed endpoint: the result shape for its own outcomes, ErrorResponse for the rest. */
export function resultResponses<S extends TSchema>(result: S) {
  return {
    200: result,
    404: result,
    429: result,
    502: result,
    503: result,
    504: result,
    ...errorResponses(400, 401, 403),
  };
}
