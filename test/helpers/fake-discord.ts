import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Closer, deferClose } from './build-test-app.js';

/**
 * A fake of Discord's OAuth2 (authorize, token, users/@me) as a real HTTP server on 127.0.0.1, strict the
 * ways the real one is: a code is used once, its PKCE verifier must match the S256 challenge it was issued
 * for, the client must authenticate, and the redirect URI must be the one authorized.
 */

export interface DiscordTestUser {
  readonly id: string;
  readonly username: string;
  readonly global_name?: string | null;
}

export const FAKE_DISCORD_CLIENT = { id: '1234567890', secret: 'fake-discord-client-secret' } as const;

export interface FakeDiscord {
  /** The API base (`DISCORD_API_URL`). */
  readonly url: string;
  /** Who the next authorization signs in (the fake's consent screen answers at once). */
  signInAs(user: DiscordTestUser): void;
  /** Make the authorize page answer with Discord's refusal (`error=access_denied`) instead. */
  deny(denied: boolean): void;
  /**
   * Misbehave: answer the token and users endpoints with this status, or never answer (`hang`); with
   * `only: 'users'`, only `users/@me` (the code exchange has then succeeded: a failure midway).
   */
  fail(how: false | { status: number } | 'hang', options?: { only?: 'users' }): void;
  /** Every token request the fake saw, with its answer's status. */
  readonly tokenRequests: { readonly code: string; readonly status: number }[];
  /** The environment that points the service at this fake. */
  env(serviceUrl: string): Record<string, string>;
  close(): Promise<void>;
}

interface IssuedCode {
  readonly user: DiscordTestUser;
  readonly challenge: string;
  readonly redirectUri: string;
  used: boolean;
}

const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

export async function startFakeDiscord(t: Closer): Promise<FakeDiscord> {
  const codes = new Map<string, IssuedCode>();
  const accessTokens = new Map<string, DiscordTestUser>();
  const tokenRequests: { code: string; status: number }[] = [];
  let user: DiscordTestUser = { id: '111111111111111111', username: 'developer', global_name: 'Developer' };
  let denied = false;
  let failure: false | { status: number } | 'hang' = false;
  let failOnlyUsers = false;
  const hanging = new Set<ServerResponse>();

  const send = (response: ServerResponse, status: number, body: unknown) => {
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  const readBody = async (request: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString();
  };
  const misbehaving = (response: ServerResponse): boolean => {
    if (failure === 'hang') {
      hanging.add(response);
      return true;
    }
    if (failure) {
      response.writeHead(failure.status, { 'content-type': 'text/html' }).end('<html>Bad gateway</html>');
      return true;
    }
    return false;
  };

  const server = createServer(async (request, response) => {
    const url = new URL(request.url ?? '/', 'http://fake');
    if (request.method === 'GET' && url.pathname === '/oauth2/authorize') {
      const query = url.searchParams;
      const redirect = new URL(query.get('redirect_uri') ?? '');
      redirect.searchParams.set('state', query.get('state') ?? '');
      if (
        query.get('client_id') !== FAKE_DISCORD_CLIENT.id ||
        query.get('response_type') !== 'code' ||
        query.get('code_challenge_method') !== 'S256' ||
        !query.get('code_challenge')
      ) {
        return send(response, 400, { error: 'invalid_request' });
      }
      if (denied) redirect.searchParams.set('error', 'access_denied');
      else {
        const code = randomBytes(16).toString('hex');
        codes.set(code, {
          user,
          challenge: query.get('code_challenge') ?? '',
          redirectUri: query.get('redirect_uri') ?? '',
          used: false,
        });
        redirect.searchParams.set('code', code);
      }
      response.writeHead(302, { location: redirect.toString() }).end();
      return;
    }
    if (request.method === 'POST' && url.pathname === '/oauth2/token') {
      if (!failOnlyUsers && misbehaving(response)) return;
      const form = new URLSearchParams(await readBody(request));
      const code = form.get('code') ?? '';
      const answer = (status: number, body: unknown) => {
        tokenRequests.push({ code, status });
        send(response, status, body);
      };
      const basic = `Basic ${Buffer.from(`${FAKE_DISCORD_CLIENT.id}:${FAKE_DISCORD_CLIENT.secret}`).toString('base64')}`;
      if (request.headers.authorization !== basic) return answer(401, { error: 'invalid_client' });
      const issued = codes.get(code);
      if (
        form.get('grant_type') !== 'authorization_code' ||
        !issued ||
        issued.used ||
        issued.redirectUri !== form.get('redirect_uri') ||
        s256(form.get('code_verifier') ?? '') !== issued.challenge
      ) {
        if (issued) issued.used = true; // A failed redemption burns the code, as Discord does.
        return answer(400, { error: 'invalid_grant', error_description: 'Invalid "code" in request.' });
      }
      issued.used = true;
      const accessToken = randomBytes(16).toString('hex');
      accessTokens.set(accessToken, issued.user);
      return answer(200, {
        access_token: accessToken,
        token_type: 'Bearer',
        expires_in: 604800,
        refresh_token: randomBytes(16).toString('hex'),
        scope: 'identify',
      });
    }
    if (request.method === 'GET' && url.pathname === '/users/@me') {
      if (misbehaving(response)) return;
      const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1] ?? '';
      const owner = accessTokens.get(token);
      if (!owner) return send(response, 401, { message: '401: Unauthorized', code: 0 });
      return send(response, 200, { avatar: null, discriminator: '0', global_name: null, ...owner });
    }
    send(response, 404, { message: '404: Not Found', code: 0 });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const fake: FakeDiscord = {
    url,
    tokenRequests,
    signInAs(next) {
      user = next;
    },
    deny(next) {
      denied = next;
    },
    fail(how, { only } = {}) {
      failure = how;
      failOnlyUsers = only === 'users';
      if (!how) for (const response of hanging) response.destroy();
    },
    env: (serviceUrl) => ({
      DISCORD_CLIENT_ID: FAKE_DISCORD_CLIENT.id,
      DISCORD_CLIENT_SECRET: FAKE_DISCORD_CLIENT.secret,
      DISCORD_REDIRECT_URI: `${serviceUrl}/auth/discord/callback`,
      DISCORD_API_URL: url,
    }),
    async close() {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  deferClose(t, () => fake.close());
  return fake;
}
