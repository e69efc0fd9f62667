import { type Static, Type } from 'typebox';
import { DEVELOPER_GRANTS, GRANTS, OPERATOR_GRANTS } from '../../platform/auth/grants.js';
import { OPENAPI_FORM } from '../../platform/openapi-form.js';
import { PageLimit } from '../../platform/pagination.js';
import { SNOWFLAKE_TEXT_PATTERN, Snowflake, SnowflakeOut } from '../../platform/snowflake.js';
import { Text } from '../../platform/text.js';
import { KEY_PATTERN } from './application-keys.service.js';
import { APPLICATION_STATES } from './applications.service.js';

const ID_PATTERN = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
/** A change's reason: the command line takes the same (src/cli/applications.command.ts). */
export const REASON_TEXT = { maxLength: 500, multiline: true } as const;
/**
 * A field of the answer a client may send back, which the service ignores whatever its value: the document
 * shows it as the answer has it (read-only), so that a generated client can send an application it read.
 */
const ServerAssigned = (form: Record<string, unknown>) =>
  Type.Unknown({
    [OPENAPI_FORM]: { ...form, readOnly: true },
    description: 'Assigned by the service: ignored when sent.',
  });

const State = (description: string) => Type.Enum([...APPLICATION_STATES], { description });
const Time = (description: string) =>
  Type.String({ format: 'date-time', description, example: '2026-11-22T03:05:17.123Z' });

/** Endpoint 1's request: the interface's DeveloperApplication, of which the client gives name, description and grants. */
export const ApplicationRequestSchema = Type.Object(
  {
    name: Text({
      minLength: 1,
      maxLength: 64,
      description: "The application's name.",
      example: 'Guild stats bot',
    }),
    description: Type.Optional(
      Text({
        maxLength: 1000,
        multiline: true,
        description: 'What the application is for (empty when left out).',
      }),
    ),
    grants: Type.Array(
      // Any known grant passes the schema, so that an operator-only one is refused by name (400
      // OPERATOR_ONLY_GRANT), not as an unknown word.
      Type.Enum([...GRANTS], {
        'x-reason': `is not a grant; an application may ask for ${DEVELOPER_GRANTS.join(', ')}`,
      }),
      {
        minItems: 1,
        // Every known grant may pass the schema (the operator ones are then refused by name): at most all.
        maxItems: GRANTS.length,
        uniqueItems: true,
        'x-reason': `must list 1 to ${DEVELOPER_GRANTS.length} distinct developer grants`,
        description:
          `The grants the application asks for: distinct, at least one, of ${DEVELOPER_GRANTS.join(', ')}. ` +
          `${OPERATOR_GRANTS.join(', ')} are given only by an operator: asking for one is a 400 (OPERATOR_ONLY_GRANT).`,
      },
    ),
    owner: Type.Optional(
      Snowflake({
        description:
          "The applicant: the access token's owner. Taken from the token; when sent it must match.",
      }),
    ),
    id: Type.Optional(ServerAssigned({ type: 'string' })),
    applied_at: Type.Optional(ServerAssigned({ type: 'string', format: 'date-time' })),
    currentState: Type.Optional(ServerAssigned({ type: 'string', enum: [...APPLICATION_STATES] })),
  },
  {
    additionalProperties: false,
    description: 'DeveloperApplication: what a developer applies for.',
    examples: [
      {
        name: 'Guild stats bot',
        description: "Shows our guild members' Bed Wars stats in our Discord server.",
        grants: ['player:read', 'messenger:log'],
      },
    ],
  },
);

/** The interface's DeveloperApplication, as the service answers it. */
export const ApplicationSchema = Type.Object(
  {
    id: Type.String({
      pattern: ID_PATTERN,
      description: "The application's id.",
      example: '0b6f7c1e-2d1a-4b8e-9a52-1c2f3e4d5a6b',
    }),
    name: Type.String({ description: "The application's name." }),
    description: Type.String({ description: 'What the application is for.' }),
    owner: SnowflakeOut({ description: 'The applicant (a Discord ID), exact.' }),
    grants: Type.Array(Type.String(), { description: 'The grants applied for.' }),
    applied_at: Time('When the application was made (RFC 3339, UTC).'),
    currentState: State(
      'pending (initial), approved, rejected, withdrawn or revoked; rejected, withdrawn and revoked are final.',
    ),
  },
  { additionalProperties: false, description: 'DeveloperApplication: an application as stored.' },
);

const TransitionSchema = Type.Object(
  {
    from: Type.Union([State('The state before.'), Type.Null()], {
      description: 'The state before; null for the application being made.',
    }),
    to: State('The state after.'),
    at: Time('When (RFC 3339, UTC).'),
    actor: Type.String({
      pattern: `^(${SNOWFLAKE_TEXT_PATTERN.slice(1, -1)}|operator)$`,
      description: 'Who: a Discord ID (decimal digits), or `operator` for the command line.',
    }),
    reason: Type.Union([Type.String(), Type.Null()], { description: 'Why, when the actor said.' }),
  },
  { additionalProperties: false, description: 'One change of state.' },
);

const OptionalTime = (description: string) => Type.Union([Time(description), Type.Null()], { description });

export const KeyStatusSchema = Type.Object(
  {
    state: Type.Enum(['uncollected', 'active', 'ended'], {
      description:
        'uncollected: approved, waiting for its owner to collect it (POST .../key); active: collected, exchangeable ' +
        'at POST /auth/token; ended: rotated, revoked, or its application revoked.',
    }),
    made_at: Time('When the key was made (on approval, or by a rotation).'),
    collected_at: OptionalTime('When its owner collected it; null until then.'),
    last_used_at: OptionalTime('When it was last exchanged for a token; null if never.'),
    ended_at: OptionalTime('When it ended; null while it has not.'),
    ended_reason: Type.Union([Type.Enum(['rotated', 'revoked', 'application_revoked']), Type.Null()], {
      description:
        'Why it ended: rotated, revoked (by its owner), application_revoked; null while it has not.',
    }),
  },
  { additionalProperties: false, description: "Where an application's key stands (never the key itself)." },
);

export const ApplicationDetailSchema = Type.Object(
  {
    ...ApplicationSchema.properties,
    history: Type.Array(TransitionSchema, {
      description: 'Every state the application has been in, oldest first; the first entry is its making.',
    }),
    key: Type.Union([KeyStatusSchema, Type.Null()], {
      description: "Where the application's key stands; null before approval.",
    }),
  },
  { additionalProperties: false, description: "An application with its history and its key's state." },
);

export const CollectedKeySchema = Type.Object(
  {
    key: Type.String({
      pattern: KEY_PATTERN,
      description:
        'The application key: shown this once and stored by the service only as a hash. Keep it secret; exchange ' +
        'it for tokens at POST /auth/token as often as needed.',
      example: 'pds_q3Zk7yD0Yw9hW8b2vJ4mX1nR5tA6sC7eF8gH9iJ0kLm',
    }),
    status: KeyStatusSchema,
  },
  { additionalProperties: false, description: 'A key, collected or made by a rotation.' },
);

export const TokenRequestSchema = Type.Object(
  {
    key: Type.String({
      maxLength: 100,
      pattern: KEY_PATTERN,
      'x-reason': 'must be an application key (pds_ and 43 characters)',
      description: "An approved application's key.",
    }),
  },
  {
    additionalProperties: false,
    description: 'An application key to exchange for a token.',
    // `key` stands for your application's key (the example runs with a real one).
    examples: [{ key: 'pds_2Qm9vX3Ab7uWc4Yf0LpZr8TnKs1Hd6Ge5Jx3Vb9Nq0I' }],
  },
);

export const ApplicationListSchema = Type.Object(
  {
    data: Type.Array(ApplicationSchema, { description: 'Newest first.' }),
    next_cursor: Type.Union([Type.String(), Type.Null()], {
      description: 'Pass as `cursor` for the next page; null on the last page.',
    }),
  },
  { additionalProperties: false, description: 'A page of applications.' },
);

export const ApplicationListQuery = Type.Object(
  {
    state: Type.Optional(State('Only applications in this state.')),
    owner: Type.Optional(
      Snowflake({
        description: "Only this owner's applications (without the applications:review grant: your own only).",
      }),
    ),
    limit: PageLimit(),
    cursor: Type.Optional(
      Type.String({ maxLength: 200, description: 'The `next_cursor` of the page before.' }),
    ),
  },
  { additionalProperties: false },
);

export const ApplicationParams = Type.Object({
  id: Type.String({
    pattern: ID_PATTERN,
    'x-reason': 'must be an application id (a lowercase UUID)',
    description: "The application's id.",
  }),
});

export const TransitionRequestSchema = Type.Object(
  {
    reason: Type.Optional(Text({ ...REASON_TEXT, description: 'Why; kept in the history.' })),
  },
  {
    additionalProperties: false,
    description: 'An optional reason for the change (the body may be left out).',
    examples: [{ reason: 'Checked with the developer on Discord.' }],
  },
);

export type ApplicationRequest = Static<typeof ApplicationRequestSchema>;
export type ApplicationWire = Static<typeof ApplicationSchema>;
export type ApplicationDetailWire = Static<typeof ApplicationDetailSchema>;
export type KeyStatusWire = Static<typeof KeyStatusSchema>;
