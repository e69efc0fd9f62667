import { type Static, Type } from 'typebox';

export const RefreshRequestSchema = Type.Object(
  {
    token: Type.String({
      minLength: 1,
      maxLength: 8192,
      description: 'The token to exchange (valid, or expired within the refresh window).',
    }),
    expires_at: Type.Optional(
      Type.String({
        format: 'date-time',
        description:
          "The token's expiry as the service gave it (RFC 3339); when given it must match the token.",
        example: '2026-11-22T04:05:17.000Z',
      }),
    ),
  },
  { additionalProperties: false, description: 'RefreshRequest: the token to exchange.' },
);

export const TokenPairSchema = Type.Object(
  {
    token: Type.String({ description: 'A JWT access token: send it as `Authorization: Bearer <token>`.' }),
    expires_at: Type.String({ format: 'date-time', description: 'When the token expires (RFC 3339, UTC).' }),
  },
  { additionalProperties: false, description: 'TokenPair: a token and when it expires.' },
);

export type RefreshRequest = Static<typeof RefreshRequestSchema>;
export type TokenPair = Static<typeof TokenPairSchema>;
