import { type Static, Type } from 'typebox';

/** The interface's TokenPair: what every route that hands out a token answers. */
export const TokenPairSchema = Type.Object(
  {
    token: Type.String({ description: 'A JWT access token: send it as `Authorization: Bearer <token>`.' }),
    expires_at: Type.String({ format: 'date-time', description: 'When the token expires (RFC 3339, UTC).' }),
  },
  { additionalProperties: false, description: 'TokenPair: a token and when it expires.' },
);

export type TokenPair = Static<typeof TokenPairSchema>;

/** A token as a TokenPair. */
export const tokenPairOf = (issued: { readonly token: string; readonly expiresAt: Date }): TokenPair => ({
  token: issued.token,
  expires_at: issued.expiresAt.toISOString(),
});
