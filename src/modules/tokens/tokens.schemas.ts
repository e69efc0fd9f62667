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
  {
    additionalProperties: false,
    description: 'RefreshRequest: the token to exchange.',
    // `token` stands for a token of yours (the example runs with a real one).
    examples: [{ token: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwMTIzNDU2NzgifQ.c2lnbmF0dXJl' }],
  },
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
    token: Type.Union(
      [
        Type.Object(
          {
            jti: Type.String({ description: "The token's id (what an operator revokes it by)." }),
            expires_at: Type.String({
              format: 'date-time',
              description: 'When the token expires (RFC 3339, UTC).',
            }),
          },
          { additionalProperties: false, description: 'The token this request carried.' },
        ),
        Type.Null(),
      ],
      { description: 'The token this request carried; null when it came with the portal’s session.' },
    ),
    budget: LimitStandingSchema(
      'The owner\'s budget of the service\'s work in cost units (RateLimit policy "work"), after this request.',
    ),
    usage_today: Type.Object(
      {
        day: Type.String({ format: 'date', description: 'The UTC day.' }),
        requests: Count(
          'Requests made with the owner’s tokens or portal session today, whatever their answer.',
        ),
        upstream_lookups: Count(
          'Lookups that reached Hypixel or Mojang on the owner’s behalf today (their share).',
        ),
        refused: Count(
          'Requests refused with 429 today (work budget, requests in progress, upstream share).',
        ),
      },
      {
        additionalProperties: false,
        description: "The owner's usage today, as every instance counted it (stored every few seconds).",
      },
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
