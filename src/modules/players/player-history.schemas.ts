import { Type } from 'typebox';
import { TimeOrDay } from '../../platform/timestamp.js';
import { DEFAULT_HISTORY_POINTS, DEFAULT_SESSIONS, MAX_HISTORY_FIELDS } from './history-request.service.js';

/** The most points one history read may ask for, and sessions one sessions read. */
const MAX_POINTS = 1000;
const MAX_SESSIONS = 100;

const range = {
  from: Type.Optional(
    TimeOrDay({
      edge: 'start',
      description: 'Only snapshots taken at or after this (default: the first kept).',
    }),
  ),
  to: Type.Optional(
    TimeOrDay({ edge: 'end', description: 'Only snapshots taken at or before this (default: now).' }),
  ),
};

const Pointers = Type.String({
  maxLength: 8192,
  description:
    `JSON Pointers into the player object (RFC 6901), comma-separated or as repeated parameters, 1 to ${MAX_HISTORY_FIELDS} ` +
    'in all; a pointer asked twice is answered once.',
  example: '/stats/Bedwars/wins_bedwars,/networkExp',
});

export const HistoryQuery = Type.Object(
  {
    fields: Type.Union([Pointers, Type.Array(Pointers, { maxItems: MAX_HISTORY_FIELDS })]),
    ...range,
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_POINTS,
        description: `At most this many points (default ${DEFAULT_HISTORY_POINTS}): when more snapshots are in the range, evenly spread ones, the first and the last among them.`,
      }),
    ),
  },
  { additionalProperties: false },
);

export const SessionsQuery = Type.Object(
  {
    ...range,
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_SESSIONS,
        description: `At most this many sessions, the newest (default ${DEFAULT_SESSIONS}).`,
      }),
    ),
  },
  { additionalProperties: false },
);

const Uuid = Type.String({
  pattern: '^[0-9a-f]{32}$',
  description: "The player's UUID, undashed lowercase.",
});
const Time = (description: string) => Type.String({ format: 'date-time', description });

export const HistorySchema = Type.Object(
  {
    uuid: Uuid,
    points: Type.Array(
      Type.Object(
        {
          at: Time('When the snapshot was fetched (RFC 3339).'),
          values: Type.Object(
            {},
            {
              additionalProperties: true,
              description:
                'Each pointer asked for, as given, and its value in the snapshot (any JSON value, numbers exact), ' +
                'or null when the player had none.',
            },
          ),
        },
        { additionalProperties: false },
      ),
      {
        description: 'One point per stored snapshot in the range, oldest first (evenly thinned to `limit`).',
      },
    ),
  },
  {
    additionalProperties: false,
    description: "The player's history: the values asked for, at each snapshot.",
  },
);

export const SessionsSchema = Type.Object(
  {
    uuid: Uuid,
    sessions: Type.Array(
      Type.Object(
        {
          start: Time('When the player logged in (their `lastLogin`).'),
          end: Type.Union([Time('When they logged out (their `lastLogout`).'), Type.Null()], {
            description: 'When they logged out, or null: still online, or no logout seen yet.',
          }),
          changes: Type.Object(
            {},
            {
              additionalProperties: Type.Number(),
              description:
                'Each numeric value that changed over the session, by JSON Pointer, and by how much (a new one counts from 0).',
            },
          ),
        },
        { additionalProperties: false },
      ),
      { description: 'Newest first.' },
    ),
  },
  { additionalProperties: false, description: "The player's play sessions, from their snapshots." },
);
