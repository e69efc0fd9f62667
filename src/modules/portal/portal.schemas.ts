import { type Static, Type } from 'typebox';
import { SnowflakeOut } from '../../platform/snowflake.js';

export const LoginQuery = Type.Object(
  {
    return_to: Type.Optional(
      Type.String({
        maxLength: 200,
        description: 'A page of the portal (`/portal/...`) to land on once signed in; `/portal/` by default.',
      }),
    ),
  },
  { additionalProperties: false },
);

/** What Discord sends the browser back with; Discord may add parameters of its own, which are ignored. */
export const CallbackQuery = Type.Object(
  {
    code: Type.Optional(Type.String({ maxLength: 512, description: 'The authorization code.' })),
    state: Type.Optional(Type.String({ maxLength: 512, description: 'The sign-in’s state.' })),
    error: Type.Optional(
      Type.String({ maxLength: 200, description: 'Why Discord did not sign the user in.' }),
    ),
  },
  { additionalProperties: true },
);

const SignedInSchema = Type.Object(
  {
    signed_in: Type.Literal(true),
    owner: SnowflakeOut({
      description: 'The signed-in developer’s Discord ID: the owner of what they do here.',
    }),
    username: Type.String({ description: 'Their Discord username.' }),
    global_name: Type.Union([Type.String(), Type.Null()], {
      description: 'Their Discord display name, if set.',
    }),
    reviewer: Type.Boolean({ description: 'Whether they review applications (an operator made them one).' }),
    expires_at: Type.String({ format: 'date-time', description: 'When the session ends.' }),
    csrf_token: Type.String({
      description: 'Send it as X-CSRF-Token with every state-changing request made with the session.',
    }),
  },
  { additionalProperties: false, description: 'The signed-in developer.' },
);

export const SessionSchema = Type.Union(
  [
    SignedInSchema,
    Type.Object(
      { signed_in: Type.Literal(false) },
      { additionalProperties: false, description: 'Signed out.' },
    ),
  ],
  { description: 'Whether this browser is signed in to the portal, and as whom.' },
);

export type SessionWire = Static<typeof SessionSchema>;
