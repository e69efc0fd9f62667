import { Type } from 'typebox';
import { BoundedObject } from '../../platform/bounded-json.js';
import { PageLimit } from '../../platform/pagination.js';
import { MAX_SNOWFLAKE, Snowflake, SnowflakeOut } from '../../platform/snowflake.js';
import { Text } from '../../platform/text.js';
import { Timestamp } from '../../platform/timestamp.js';

const OPTIONS = {
  maxBytes: 4096,
  maxDepth: 8,
  description: "The command's options as the bot received them: a free-form object.",
};

/** Endpoint 3's request: the interface's InteractionLog. */
export const InteractionLogRequestSchema = Type.Object(
  {
    interaction: Type.Object(
      {
        interaction_name: Text({
          minLength: 1,
          maxLength: 100,
          description: 'The command used.',
          example: 'stats',
        }),
        interaction_token: Type.String({
          minLength: 1,
          maxLength: 1024,
          pattern: '^[\\x21-\\x7e]+$',
          'x-reason': 'must be 1 to 1024 printable ASCII characters without spaces',
          description:
            "The interaction's token: a secret. It is never stored or logged; only a keyed fingerprint is kept, " +
            'to spot the same interaction logged twice.',
        }),
        interaction_type: Text({
          minLength: 1,
          maxLength: 32,
          description: 'The kind of interaction.',
          example: 'APPLICATION_COMMAND',
        }),
        options: Type.Optional(BoundedObject(OPTIONS)),
        server_id: Type.Optional(
          Snowflake({ description: 'The server it happened in (absent in direct messages).' }),
        ),
        user_id: Snowflake({ description: 'The user who interacted.' }),
      },
      { additionalProperties: false },
    ),
    server: Type.Optional(
      Type.Object(
        {
          server_id: Snowflake({
            description: "The server's ID: interaction.server_id when both are given.",
          }),
          server_name: Type.Optional(
            Text({ minLength: 1, maxLength: 100, description: "The server's name." }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    user: Type.Object(
      {
        user_id: Snowflake({ description: "The user's ID: interaction.user_id." }),
        username: Text({ minLength: 1, maxLength: 64, description: "The user's Discord username." }),
      },
      { additionalProperties: false },
    ),
  },
  {
    additionalProperties: false,
    description: 'InteractionLog: one interaction of a user with the bot.',
    examples: [
      {
        interaction: {
          interaction_name: 'stats',
          interaction_token: 'aW50ZXJhY3Rpb246OTg3NjU0MzIxMDk4NzY1NDMy',
          interaction_type: 'APPLICATION_COMMAND',
          options: { player: 'Minikloon', mode: 'bedwars' },
          server_id: '123456789012345678',
          user_id: '987654321098765432',
        },
        server: { server_id: '123456789012345678', server_name: 'Bed Wars Club' },
        user: { user_id: '987654321098765432', username: 'minikloon_fan' },
      },
    ],
  },
);

const InteractionOut = {
  interaction_name: Type.String(),
  interaction_type: Type.String(),
  options: Type.Optional(Type.Object({}, { additionalProperties: true })),
  server_id: Type.Optional(SnowflakeOut()),
  user_id: SnowflakeOut(),
};
const ServerOut = Type.Optional(
  Type.Object(
    { server_id: SnowflakeOut(), server_name: Type.Optional(Type.String()) },
    { additionalProperties: false },
  ),
);
const UserOut = Type.Object(
  { user_id: SnowflakeOut(), username: Type.String() },
  { additionalProperties: false },
);

/** Endpoint 3's answer: the log as received (IDs as integers of the same digits). */
export const InteractionLogSchema = Type.Object(
  {
    interaction: Type.Object(
      { ...InteractionOut, interaction_token: Type.String({ description: 'As sent.' }) },
      { additionalProperties: false },
    ),
    server: ServerOut,
    user: UserOut,
  },
  {
    additionalProperties: false,
    description: 'InteractionLog: the log as received; for an interaction logged before, its first record.',
  },
);

const StoredLogSchema = Type.Object(
  {
    id: Type.String({ description: "The log's id." }),
    received_at: Type.String({
      format: 'date-time',
      description: 'When the service received it (RFC 3339, UTC).',
    }),
    owner: SnowflakeOut({ description: 'The owner of the token that logged it.' }),
    interaction: Type.Object(InteractionOut, {
      additionalProperties: false,
      description: 'The interaction, without its token.',
    }),
    server: ServerOut,
    user: UserOut,
  },
  { additionalProperties: false, description: 'A stored interaction log (never with its token).' },
);

export const InteractionLogListSchema = Type.Object(
  {
    data: Type.Array(StoredLogSchema, { description: 'Newest first.' }),
    next_cursor: Type.Union([Type.String(), Type.Null()], {
      description: 'Pass as `cursor` for the next page; null on the last page.',
    }),
  },
  { additionalProperties: false, description: 'A page of interaction logs.' },
);

/**
 * An owner named in a query: a Discord ID, or 0, the owner of what was kept from before owners were
 * recorded (docs/decisions.md), which only an auditor reads.
 */
const OwnerFilter = (description: string) =>
  Type.Union([Type.Literal('0'), Snowflake()], {
    'x-reason': `must be an owner: a Discord ID from 1 to ${MAX_SNOWFLAKE}, or 0`,
    description,
  });

export const InteractionLogListQuery = Type.Object(
  {
    owner: Type.Optional(
      OwnerFilter(
        "Only this owner's logs. Without the messenger:audit grant you read your own only, and `owner`, if " +
          "given, must be you; with it, every owner's unless `owner` names one.",
      ),
    ),
    user_id: Type.Optional(Snowflake({ description: "Only this user's interactions." })),
    server_id: Type.Optional(Snowflake({ description: "Only this server's interactions." })),
    since: Type.Optional(Timestamp({ description: 'Only logs received at or after this time (RFC 3339).' })),
    limit: PageLimit(),
    cursor: Type.Optional(
      Type.String({ maxLength: 200, description: 'The `next_cursor` of the page before.' }),
    ),
  },
  { additionalProperties: false },
);
