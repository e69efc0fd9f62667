import { Type } from 'typebox';
import { Text } from '../../platform/text.js';
import { Timestamp } from '../../platform/timestamp.js';
import { LOBBY_MAX_LENGTH } from './ping-writes.service.js';

/** The most samples one request may carry. */
export const MAX_SAMPLES_PER_REQUEST = 1000;
/** The longest ping a sample may give, in milliseconds. */
const MAX_PING_MS = 60_000;

const Day = (description: string) =>
  Type.String({
    format: 'date',
    'x-reason': 'must be a calendar day, YYYY-MM-DD',
    description,
    example: '2026-11-22',
  });

const PingSampleSchema = Type.Object(
  {
    ping: Type.Integer({
      minimum: 0,
      maximum: MAX_PING_MS,
      'x-reason': `must be a whole number of milliseconds from 0 to ${MAX_PING_MS}`,
      description: 'The round trip, in whole milliseconds.',
      example: 42,
    }),
    lobby: Text({
      minLength: 1,
      maxLength: LOBBY_MAX_LENGTH,
      description: 'The lobby the player was in.',
      example: 'bedwars_lobby_3',
    }),
    at: Type.Optional(
      Timestamp({
        description:
          'When it was measured (RFC 3339): now when left out; at most PING_MAX_FUTURE_SECONDS (60 by default) ' +
          'after the request is received, and within the retention.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const PingIngestRequestSchema = Type.Object(
  {
    samples: Type.Array(PingSampleSchema, {
      minItems: 1,
      maxItems: MAX_SAMPLES_PER_REQUEST,
      'x-reason': `must hold 1 to ${MAX_SAMPLES_PER_REQUEST} samples`,
      description: `1 to ${MAX_SAMPLES_PER_REQUEST} samples, stored together or not at all; one equal to a stored sample is stored once.`,
    }),
  },
  { additionalProperties: false, examples: [{ samples: [{ ping: 42, lobby: 'bedwars_lobby_3' }] }] },
);

export const PingIngestResultSchema = Type.Object(
  {
    player: Type.String({ pattern: '^[0-9a-f]{32}$', description: "The player's UUID, undashed lowercase." }),
    stored: Type.Integer({
      minimum: 0,
      description: 'How many samples were stored now: those not stored before.',
    }),
    duplicates: Type.Integer({
      minimum: 0,
      description:
        'How many samples were not stored again: equal to a sample already stored (by anyone), or to an ' +
        'earlier one of the batch. stored + duplicates is the number of samples sent.',
    }),
  },
  { additionalProperties: false, description: 'The new samples are committed.' },
);

const PingDaySchema = Type.Object(
  {
    avg: Type.Number({ description: "The mean of all the day's samples, in ms, rounded to 2 decimals." }),
    min: Type.Integer({ description: "The day's shortest ping, in ms." }),
    max: Type.Integer({ description: "The day's longest ping, in ms." }),
    date: Type.String({ format: 'date', description: 'The UTC day, YYYY-MM-DD.' }),
    history: Type.Array(Type.Integer(), {
      description: "The day's ping values in time order (its latest ones, up to PING_HISTORY_PER_DAY).",
    }),
    last_lobby: Type.String({ description: "The lobby of the day's last sample." }),
    last_ping: Type.String({
      format: 'date-time',
      description: "When the day's last sample was taken (RFC 3339).",
    }),
  },
  { additionalProperties: false },
);

/** Endpoint 6's PingHistory. */
export const PingHistorySchema = Type.Object(
  { data: Type.Array(PingDaySchema, { description: 'One record per UTC day with samples, newest first.' }) },
  { additionalProperties: false, description: 'PingHistory: daily statistics and history.' },
);

export const PingHistoryQuery = Type.Object(
  {
    from: Type.Optional(Day('Only this day and later (UTC).')),
    to: Type.Optional(Day('Only this day and earlier (UTC).')),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 100_000, description: 'At most this many days (the newest).' }),
    ),
  },
  { additionalProperties: false },
);
