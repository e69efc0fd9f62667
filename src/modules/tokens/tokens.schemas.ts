import { type Static, Type } from 'typebox';
import { SnowflakeOut } from '../../platform/snowflake.js';

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

const Count = (description: string) => Type.Integer({ minimum: 0, description });

const LimitStandingSchema = (description: string) =>
  Type.Object(
    {
      limit: Count('Units per window (q of RateLimit-Policy).'),
      window_seconds: Count('The window (w).'),
      remaining: Count('Units left now (r of RateLimit).'),
      reset_seconds: Count('Seconds until the quota is whole again (t).'),
    },
    { additionalProperties: false, description },
  );

export const CallerSchema = Type.Object(
  {
    owner: SnowflakeOut({ description: "The token's owner (a Discord ID), exact." }),
    grants: Type.Array(Type.String(), { description: 'The grants the token carries.' }),
    token: Type.Object(
      {
        jti: Type.String({ description: "The token's id (what an operator revokes it by)." }),
        expires_at: Type.String({
          format: 'date-time',
          description: 'When the token expires (RFC 3339, UTC).',
        }),
      },
      { additionalProperties: false, description: 'The token this request carried.' },
    ),
    budget: LimitStandingSchema(
      'The owner\'s budget of the service\'s work in cost units (RateLimit policy "work"), after this request.',
    ),
    upstream: Type.Union(
      [
        LimitStandingSchema(
          'The owner\'s share of the upstream key: uncached player and profile lookups (RateLimit policy "upstream").',
        ),
        Type.Null(),
      ],
      { description: "The owner's share of the upstream key; null until the service knows the key's limit." },
    ),
  },
  { additionalProperties: false, description: 'Who the caller is, and where they stand in their limits.' },
);

export type RefreshRequest = Static<typeof RefreshRequestSchema>;
export type TokenPair = Static<typeof TokenPairSchema>;
