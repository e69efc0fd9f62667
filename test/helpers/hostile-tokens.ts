import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import type { Config } from '../../src/config.js';

/** An Authorization header that must get a 401: no token, a malformed one, or one this service did not issue as it is. */
export interface HostileCredential {
  readonly name: string;
  /** The header's value; undefined: no header. */
  readonly authorization: string | undefined;
}

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/**
 * The tokens a hostile client tries: expired, forged, `alg: none`, for another audience or issuer, of
 * another type or algorithm, naming no owner or an unknown grant, and headers that are not bearer tokens.
 * Each is made with the service's own secret where that is what makes it dangerous.
 */
export async function hostileCredentials(config: Config, owner: bigint): Promise<HostileCredential[]> {
  const secret = new TextEncoder().encode(String(config.auth.jwtSecret));
  const { issuer, audience } = config.auth;
  const now = Math.floor(Date.now() / 1000);
  const claims = { scope: 'player:read', sub: owner.toString(), jti: randomUUID(), iat: now, exp: now + 600 };
  const signed = (
    payload: Record<string, unknown>,
    header: Record<string, unknown> = {},
    key: Uint8Array = secret,
  ) =>
    new SignJWT(payload)
      .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', ...header })
      .sign(key)
      .then((token) => `Bearer ${token}`);
  const valid = await signed({ ...claims, iss: issuer, aud: audience });
  const [head, body] = valid.slice('Bearer '.length).split('.');
  return [
    { name: 'no Authorization header', authorization: undefined },
    { name: 'an empty bearer', authorization: 'Bearer ' },
    { name: 'Basic credentials', authorization: 'Basic dXNlcjpwYXNzd29yZA==' },
    { name: 'three dots of nothing', authorization: 'Bearer ..' },
    { name: 'garbage', authorization: 'Bearer not-a-token-at-all' },
    { name: 'a 9 KB token', authorization: `Bearer ${'a'.repeat(9000)}.${'b'.repeat(10)}.c` },
    { name: 'a token in unicode', authorization: `Bearer ${encodeURIComponent('tökén.ñ.💥')}` },
    {
      name: 'alg: none',
      authorization: `Bearer ${base64url({ alg: 'none', typ: 'at+jwt' })}.${body}.`,
    },
    {
      name: 'alg: none with a signature kept',
      authorization: `Bearer ${base64url({ alg: 'none', typ: 'at+jwt' })}.${body}.${valid.split('.')[2]}`,
    },
    { name: 'a forged signature', authorization: `Bearer ${head}.${body}.${'A'.repeat(43)}` },
    {
      name: 'claims changed under the signature',
      authorization: `Bearer ${head}.${base64url({ ...claims, iss: issuer, aud: audience, scope: 'admin:applications messenger:read' })}.${valid.split('.')[2]}`,
    },
    {
      name: 'signed with another secret',
      authorization: await signed(
        { ...claims, iss: issuer, aud: audience },
        {},
        new TextEncoder().encode('another-secret-of-at-least-thirty-two-bytes'),
      ),
    },
    {
      name: 'expired an hour ago',
      authorization: await signed({
        ...claims,
        iss: issuer,
        aud: audience,
        iat: now - 7200,
        exp: now - 3600,
      }),
    },
    {
      name: 'for another audience',
      authorization: await signed({ ...claims, iss: issuer, aud: 'someone-else' }),
    },
    {
      name: 'from another issuer',
      authorization: await signed({ ...claims, iss: 'https://evil.example', aud: audience }),
    },
    {
      name: 'an ID token (typ JWT)',
      authorization: await signed({ ...claims, iss: issuer, aud: audience }, { typ: 'JWT' }),
    },
    {
      name: 'HS512 with the same secret',
      authorization: await signed({ ...claims, iss: issuer, aud: audience }, { alg: 'HS512' }),
    },
    {
      name: 'no owner',
      authorization: await signed({ ...claims, sub: undefined, iss: issuer, aud: audience }),
    },
    { name: 'owner 0', authorization: await signed({ ...claims, sub: '0', iss: issuer, aud: audience }) },
    {
      name: 'an owner beyond 64 bits',
      authorization: await signed({ ...claims, sub: '18446744073709551616', iss: issuer, aud: audience }),
    },
    {
      name: 'an unknown grant',
      authorization: await signed({ ...claims, scope: 'root', iss: issuer, aud: audience }),
    },
    {
      name: 'a jti not issued here',
      authorization: await signed({ ...claims, jti: "' OR 1=1 --", iss: issuer, aud: audience }),
    },
    {
      name: 'a well-made token never issued (no record)',
      authorization: await signed({ ...claims, iss: issuer, aud: audience }),
    },
  ];
}
