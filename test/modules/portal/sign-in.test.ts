import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { it, type TestContext } from 'node:test';
import { decodeJwt } from 'jose';
import { sql } from 'kysely';
import { type Backend, describeEachBackend } from '../../helpers/backends.js';
import { buildTestApp } from '../../helpers/build-test-app.js';
import { type DiscordTestUser, type FakeDiscord, startFakeDiscord } from '../../helpers/fake-discord.js';
import { json, problemName, type Reply } from '../../helpers/replies.js';
import { bearer, issueToken } from '../../helpers/tokens.js';

const SERVICE = 'http://service.test';
const BASE = '/admin/developer/applications';
const ALICE: DiscordTestUser = { id: '222222222222222222', username: 'alice', global_name: 'Alice' };
const BOB: DiscordTestUser = { id: '18446744073709551615', username: 'bob' };
const REVIEWER: DiscordTestUser = { id: '333333333333333333', username: 'rita' };

/** The value of a cookie a reply sets, and its attributes. */
function setCookie(reply: Reply, name: string): { value: string; attributes: string } | undefined {
  const headers = reply.headers['set-cookie'];
  for (const header of ([] as string[]).concat((headers as string | string[] | undefined) ?? [])) {
    const [pair = '', ...attributes] = header.split('; ');
    const [key, value = ''] = pair.split('=');
    if (key === name) return { value: decodeURIComponent(value), attributes: attributes.join('; ') };
  }
  return undefined;
}

async function setup(t: TestContext, backend: Backend, env: Record<string, string> = {}) {
  const discord = await startFakeDiscord(t);
  const test = await buildTestApp(t, {
    backend,
    env: { ...discord.env(SERVICE), PORTAL_REVIEWERS: REVIEWER.id, ...env },
  });
  const { app } = test;

  /** The browser's side of a sign-in, up to Discord's redirect back: the callback's query and state cookie. */
  const goToDiscord = async (user: DiscordTestUser, returnTo?: string) => {
    const login = await app.inject({
      method: 'GET',
      url: `/auth/discord/login${returnTo === undefined ? '' : `?return_to=${encodeURIComponent(returnTo)}`}`,
    });
    assert.equal(login.statusCode, 302, login.body);
    const state = setCookie(login, 'pds_sign_in');
    assert.ok(state, 'the state cookie is set');
    discord.signInAs(user);
    const authorized = await fetch(String(login.headers.location), { redirect: 'manual' });
    const back = new URL(String(authorized.headers.get('location')));
    assert.equal(`${back.origin}${back.pathname}`, `${SERVICE}/auth/discord/callback`);
    return { login, query: back.search, stateCookie: state.value };
  };
  const callback = (query: string, stateCookie?: string) =>
    app.inject({
      method: 'GET',
      url: `/auth/discord/callback${query}`,
      headers: stateCookie === undefined ? {} : { cookie: `pds_sign_in=${stateCookie}` },
    });
  /** A whole sign-in: the session cookie, and the session's CSRF token. */
  const signIn = async (user: DiscordTestUser) => {
    const { query, stateCookie } = await goToDiscord(user);
    const back = await callback(query, stateCookie);
    assert.equal(back.statusCode, 302, back.body);
    const session = setCookie(back, 'pds_session');
    assert.ok(session, 'the session cookie is set');
    const cookie = `pds_session=${session.value}`;
    const info = await app.inject({ method: 'GET', url: '/auth/session', headers: { cookie } });
    return { cookie, csrf: json(info).csrf_token as string, back, info };
  };
  /** A request made with the session cookie (and the CSRF token when given). */
  const withSession = (
    method: 'GET' | 'POST',
    url: string,
    session: { cookie: string; csrf?: string },
    payload?: unknown,
  ) =>
    app.inject({
      method,
      url,
      headers: { cookie: session.cookie, ...(session.csrf ? { 'x-csrf-token': session.csrf } : {}) },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  return { ...test, discord, goToDiscord, callback, signIn, withSession };
}

describeEachBackend('Discord sign-in and portal sessions', (backend) => {
  it('signs in with Discord (PKCE S256, state), starting an HttpOnly SameSite=Lax session kept server-side', async (t) => {
    const { app, logs, goToDiscord, callback, withSession } = await setup(t, backend);
    const { login, query, stateCookie } = await goToDiscord(ALICE);
    const authorize = new URL(String(login.headers.location));
    assert.equal(authorize.pathname, '/oauth2/authorize');
    assert.equal(authorize.searchParams.get('code_challenge_method'), 'S256');
    assert.match(authorize.searchParams.get('code_challenge') ?? '', /^[A-Za-z0-9_-]{43}$/);
    assert.equal(authorize.searchParams.get('scope'), 'identify');
    assert.equal(authorize.searchParams.get('state'), stateCookie);
    assert.match(setCookie(login, 'pds_sign_in')?.attributes ?? '', /HttpOnly/);

    const back = await callback(query, stateCookie);
    assert.equal(back.statusCode, 302, back.body);
    assert.equal(back.headers.location, '/portal/');
    const session = setCookie(back, 'pds_session');
    assert.match(session?.attributes ?? '', /HttpOnly/);
    assert.match(session?.attributes ?? '', /SameSite=Lax/);
    assert.match(session?.attributes ?? '', /Path=\//);
    assert.doesNotMatch(session?.attributes ?? '', /Secure/, 'not Secure outside production');
    assert.equal(setCookie(back, 'pds_sign_in')?.value, '', 'the state cookie is spent');
    const { rows } = await sql<{ id_hash: string }>`select id_hash from portal_sessions`.execute(app.db);
    assert.equal(rows.length, 1);
    assert.notEqual(rows[0]?.id_hash, session?.value, 'the session id is stored only as a hash');

    const cookie = `pds_session=${session?.value}`;
    const info = await app.inject({ method: 'GET', url: '/auth/session', headers: { cookie } });
    assert.equal(info.statusCode, 200);
    assert.equal(info.headers['cache-control'], 'no-store');
    const body = json(info);
    assert.equal(body.signed_in, true);
    assert.match(info.body, /"owner":222222222222222222,/);
    assert.equal(body.username, 'alice');
    assert.equal(body.global_name, 'Alice');
    assert.equal(body.reviewer, false);
    const me = await withSession('GET', '/auth/me', { cookie });
    assert.equal(me.statusCode, 200, me.body);
    assert.deepEqual(json(me).grants, [], 'a session carries no grant');
    assert.equal(json(me).token, null);
    const signedOut = await app.inject({ method: 'GET', url: '/auth/session' });
    assert.deepEqual(json(signedOut), { signed_in: false });
    // No secret of the sign-in reaches a log line: not the code, the state, the session id or its CSRF token.
    const code = new URLSearchParams(query).get('code') ?? '';
    const logged = logs.lines.map((line) => JSON.stringify(line)).join('\n');
    for (const secret of [code, stateCookie, session?.value ?? '', body.csrf_token]) {
      assert.ok(secret.length > 8 && !logged.includes(secret), 'a secret of the sign-in was logged');
    }
  });

  it('a state-changing request with the session needs its CSRF token; the session opens no data route and is no bearer token', async (t) => {
    const { app, signIn, withSession } = await setup(t, backend);
    const alice = await signIn(ALICE);
    const application = { name: 'Alice bot', grants: ['player:read'] };
    for (const csrf of [undefined, '', 'wrong', `${alice.csrf}x`]) {
      const reply = await withSession(
        'POST',
        BASE,
        { cookie: alice.cookie, ...(csrf === undefined ? {} : { csrf }) },
        application,
      );
      assert.equal(reply.statusCode, 403, reply.body);
      assert.equal(problemName(reply), 'CSRF_TOKEN_INVALID');
    }
    const bob = await signIn(BOB);
    const crossed = await withSession('POST', BASE, { cookie: alice.cookie, csrf: bob.csrf }, application);
    assert.equal(crossed.statusCode, 403, "another session's CSRF token");
    assert.equal(problemName(crossed), 'CSRF_TOKEN_INVALID');
    const applied = await withSession('POST', BASE, alice, application);
    assert.equal(applied.statusCode, 200, applied.body);
    assert.match(applied.body, /"owner":222222222222222222,/, 'the owner is the Discord user');
    assert.equal(
      (await withSession('GET', BASE, { cookie: alice.cookie })).statusCode,
      200,
      'reads need no CSRF',
    );

    const player = await withSession('GET', '/player/Notch', alice);
    assert.equal(player.statusCode, 401, 'a data route takes no session');
    assert.equal(problemName(player), 'TOKEN_MISSING');
    const sessionId = alice.cookie.slice('pds_session='.length);
    const asBearer = await app.inject({ method: 'GET', url: BASE, headers: bearer(sessionId) });
    assert.equal(asBearer.statusCode, 401, 'the session id is not a bearer token');
    const forged = await withSession('GET', BASE, { cookie: 'pds_session=made-up' });
    assert.equal(forged.statusCode, 401);
    assert.equal(problemName(forged), 'SESSION_INVALID');
    assert.match(
      json(forged).extra[0].developer_reason,
      /the developer portal \(\/portal\/: sign in with Discord/,
    );
    const page = (await app.inject({ method: 'GET', url: '/docs' })).body;
    assert.match(page, /open the <a href="\/portal\/">developer portal<\/a>/);
  });

  it('signing out ends the session server-side (CSRF needed), and clears the cookie', async (t) => {
    const { signIn, withSession } = await setup(t, backend);
    const alice = await signIn(ALICE);
    const noCsrf = await withSession('POST', '/auth/logout', { cookie: alice.cookie });
    assert.equal(noCsrf.statusCode, 403);
    const out = await withSession('POST', '/auth/logout', alice);
    assert.equal(out.statusCode, 204, out.body);
    assert.equal(setCookie(out, 'pds_session')?.value, '');
    assert.deepEqual(json(await withSession('GET', '/auth/session', alice)), { signed_in: false });
    const after = await withSession('POST', BASE, alice, { name: 'x', grants: ['player:read'] });
    assert.equal(after.statusCode, 401, 'the old cookie opens nothing');
    assert.equal(problemName(after), 'SESSION_INVALID');
  });

  it('refuses a missing, wrong, foreign or replayed state, and a code used twice', async (t) => {
    const { goToDiscord, callback, discord } = await setup(t, backend);
    const { query, stateCookie } = await goToDiscord(ALICE);
    const params = new URLSearchParams(query);
    const code = params.get('code') ?? '';
    const refused = async (reply: Reply, name: string, message: string) => {
      assert.equal(reply.statusCode, 400, `${message}: ${reply.body}`);
      assert.equal(problemName(reply), name, message);
      assert.equal(setCookie(reply, 'pds_session'), undefined, `${message}: no session`);
    };
    await refused(await callback(`?code=${code}`, stateCookie), 'SIGN_IN_STATE_INVALID', 'no state');
    await refused(await callback(`?state=${stateCookie}`, stateCookie), 'SIGN_IN_STATE_INVALID', 'no code');
    await refused(
      await callback(`?code=${code}&state=other`, stateCookie),
      'SIGN_IN_STATE_INVALID',
      'wrong state',
    );
    await refused(await callback(query), 'SIGN_IN_STATE_INVALID', 'another browser (no state cookie)');
    await refused(
      await callback(`?code=${code}&state=made-up`, 'made-up'),
      'SIGN_IN_STATE_INVALID',
      'made-up state',
    );
    assert.equal(discord.tokenRequests.length, 0, 'none of those reached Discord');

    assert.equal((await callback(query, stateCookie)).statusCode, 302, 'the real one signs in');
    await refused(await callback(query, stateCookie), 'SIGN_IN_STATE_INVALID', 'the same state again');

    // A new sign-in, finished with the old (used) code: Discord refuses it.
    const second = await goToDiscord(ALICE);
    const replayed = `?code=${code}&state=${new URLSearchParams(second.query).get('state')}`;
    await refused(await callback(replayed, second.stateCookie), 'SIGN_IN_REJECTED', 'a used code');
    assert.equal(discord.tokenRequests.at(-1)?.status, 400);
  });

  it('two sign-ins started in one browser (two tabs): the one whose cookie the browser holds still finishes', async (t) => {
    const { goToDiscord, callback } = await setup(t, backend);
    const tabA = await goToDiscord(ALICE);
    const tabB = await goToDiscord(ALICE);
    // One cookie jar: B's state cookie replaced A's. A comes back first and is refused...
    const a = await callback(tabA.query, tabB.stateCookie);
    assert.equal(a.statusCode, 400, a.body);
    assert.equal(problemName(a), 'SIGN_IN_STATE_INVALID');
    assert.equal(setCookie(a, 'pds_sign_in'), undefined, "B's cookie is left for B");
    // ...and B, with the cookie the browser still holds, signs in; its cookie is spent then.
    const b = await callback(tabB.query, tabB.stateCookie);
    assert.equal(b.statusCode, 302, b.body);
    assert.ok(setCookie(b, 'pds_session'));
    assert.equal(setCookie(b, 'pds_sign_in')?.value, '');
  });

  it('refuses a code whose PKCE verifier does not match its challenge', async (t) => {
    const { goToDiscord, discord, databaseUrl } = await setup(t, backend);
    const { query, stateCookie } = await goToDiscord(ALICE);
    // Finished by an instance that derives verifiers with another key (another signing secret): the
    // verifier it sends is not the one the challenge was made from.
    const other = await buildTestApp(t, {
      backend,
      databaseUrl,
      env: { ...discord.env(SERVICE), JWT_SECRET: 'another-secret-of-at-least-thirty-two-bytes' },
    });
    const reply = await other.app.inject({
      method: 'GET',
      url: `/auth/discord/callback${query}`,
      headers: { cookie: `pds_sign_in=${stateCookie}` },
    });
    assert.equal(reply.statusCode, 400, reply.body);
    assert.equal(problemName(reply), 'SIGN_IN_REJECTED');
    assert.equal(discord.tokenRequests.at(-1)?.status, 400, 'Discord refused the verifier');
  });

  it('stores no PKCE verifier, and only hashes of states and session ids', async (t) => {
    const { app, goToDiscord, callback } = await setup(t, backend);
    const { query, stateCookie } = await goToDiscord(ALICE);
    const { rows: attempts } = await sql<Record<string, unknown>>`select * from sign_in_attempts`.execute(
      app.db,
    );
    assert.deepEqual(Object.keys(attempts[0] ?? {}).sort(), ['expires_at', 'return_to', 'state_hash']);
    assert.equal(attempts[0]?.state_hash, createHash('sha256').update(stateCookie).digest('hex'));
    const back = await callback(query, stateCookie);
    const session = setCookie(back, 'pds_session')?.value ?? '';
    const { rows } = await sql<{ id_hash: string }>`select id_hash from portal_sessions`.execute(app.db);
    assert.equal(rows[0]?.id_hash, createHash('sha256').update(session).digest('hex'));
  });

  it('limits sign-ins started per client address: a flood of them gets 429 and writes nothing more', async (t) => {
    const { app } = await setup(t, backend, { RATE_LIMIT_AUTH_PER_MINUTE: '3' });
    const statuses = [];
    for (let attempt = 0; attempt < 6; attempt++)
      statuses.push((await app.inject({ method: 'GET', url: '/auth/discord/login' })).statusCode);
    assert.deepEqual(statuses, [302, 302, 302, 429, 429, 429]);
    const { rows } = await sql<{ n: number }>`select count(*) as n from sign_in_attempts`.execute(app.db);
    assert.equal(Number(rows[0]?.n), 3, 'a refused sign-in stores no state');
  });

  it('never redirects off the portal: return_to must be a portal path', async (t) => {
    const { app, goToDiscord, callback } = await setup(t, backend);
    for (const evil of [
      'https://evil.example/',
      '//evil.example/',
      '/\\evil.example',
      '/portal//evil.example',
      '/portal/../../evil',
      '/portal/%2F%2Fevil.example',
      'javascript:alert(1)',
      '/admin/developer/applications',
      '/portal/x?next=https://evil.example',
      ` /portal/`,
      `/portal/${'a'.repeat(300)}`,
    ]) {
      const reply = await app.inject({
        method: 'GET',
        url: `/auth/discord/login?return_to=${encodeURIComponent(evil)}`,
      });
      assert.equal(reply.statusCode, 400, `${evil}: ${reply.body}`);
      assert.ok(['RETURN_PATH_INVALID', 'INVALID_FIELD'].includes(problemName(reply) ?? ''), evil);
      assert.equal(reply.headers.location, undefined);
    }
    // A long path refused near its end is refused at once (the check does not backtrack).
    const started = performance.now();
    const long = await app.inject({
      method: 'GET',
      url: `/auth/discord/login?return_to=${encodeURIComponent(`/portal/${'a'.repeat(180)}!`)}`,
    });
    assert.equal(long.statusCode, 400);
    assert.ok(performance.now() - started < 1000, 'a refused return path takes no time');
    for (const good of ['/portal/', '/portal/applications', '/portal/a/b/', '/portal/a-b_c/d']) {
      const reply = await app.inject({
        method: 'GET',
        url: `/auth/discord/login?return_to=${encodeURIComponent(good)}`,
      });
      assert.equal(reply.statusCode, 302, `${good}: ${reply.body}`);
    }
    const { query, stateCookie } = await goToDiscord(ALICE, '/portal/applications');
    const back = await callback(query, stateCookie);
    assert.equal(back.headers.location, '/portal/applications', 'a portal page is fine');
  });

  it('a Discord that refuses the service’s own client (a wrong secret) is the service’s 502, logged, not the user’s 400', async (t) => {
    const { goToDiscord, callback, discord, logs } = await setup(t, backend, {
      DISCORD_CLIENT_SECRET: 'not-the-secret',
    });
    const { query, stateCookie } = await goToDiscord(ALICE);
    const failed = await callback(query, stateCookie);
    assert.equal(failed.statusCode, 502, failed.body);
    assert.equal(problemName(failed), 'DISCORD_UNAVAILABLE');
    assert.match(
      json(failed).extra[0].developer_reason,
      /refused this service's OAuth2 client \(invalid_client\)/,
    );
    assert.doesNotMatch(failed.body, /not-the-secret/);
    assert.equal(discord.tokenRequests.at(-1)?.status, 401);
    const logged = logs.lines.find((line) => line.level === 'error');
    assert.match(String(logged?.msg), /check DISCORD_CLIENT_ID and DISCORD_CLIENT_SECRET/);
    assert.equal(logged?.code, 'invalid_client');
    assert.ok(!logs.raw.join('').includes('not-the-secret'), 'the secret is never logged');
  });

  it('a refusal on Discord goes back to the portal, signed out; Discord failing midway is a 502, never a 500', async (t) => {
    const { goToDiscord, callback, discord } = await setup(t, backend, { UPSTREAM_TIMEOUT_MS: '300' });
    discord.deny(true);
    const denied = await goToDiscord(ALICE);
    const back = await callback(denied.query, denied.stateCookie);
    assert.equal(back.statusCode, 302);
    assert.equal(back.headers.location, '/portal/?sign_in=denied');
    assert.equal(setCookie(back, 'pds_session'), undefined);
    discord.deny(false);

    for (const how of [{ status: 502 }, { status: 200 }, 'hang'] as const) {
      const { query, stateCookie } = await goToDiscord(ALICE);
      discord.fail(how);
      const reply = await callback(query, stateCookie);
      discord.fail(false);
      assert.equal(reply.statusCode, 502, `${JSON.stringify(how)}: ${reply.body}`);
      assert.equal(problemName(reply), 'DISCORD_UNAVAILABLE');
      assert.doesNotMatch(reply.body, /stack|at .*\.js/);
    }
  });

  it('a reviewer (PORTAL_REVIEWERS) decides with the session; one developer cannot act on another’s application or key', async (t) => {
    const { signIn, withSession } = await setup(t, backend);
    const alice = await signIn(ALICE);
    const bob = await signIn(BOB);
    const rita = await signIn(REVIEWER);
    assert.equal(json(rita.info).reviewer, true);
    const { id } = json(
      await withSession('POST', BASE, alice, { name: 'Alice bot', grants: ['player:read'] }),
    );
    const asBob = await withSession('POST', `${BASE}/${id}/approve`, bob, {});
    assert.equal(asBob.statusCode, 403, 'a developer is no reviewer');
    assert.equal((await withSession('POST', `${BASE}/${id}/withdraw`, bob, {})).statusCode, 403);
    assert.equal((await withSession('GET', `${BASE}/${id}`, bob)).statusCode, 403);
    const pending = await withSession('GET', `${BASE}?state=pending`, rita);
    assert.equal(json(pending).data.length, 1, 'the reviewer sees pending applications');
    const noCsrf = await withSession('POST', `${BASE}/${id}/approve`, { cookie: rita.cookie }, {});
    assert.equal(noCsrf.statusCode, 403);
    const approved = await withSession('POST', `${BASE}/${id}/approve`, rita, { reason: 'fine' });
    assert.equal(approved.statusCode, 200, approved.body);
    assert.equal(json(approved).history.at(-1).actor, REVIEWER.id);

    for (const path of ['key', 'key/rotate', 'key/revoke']) {
      const reply = await withSession('POST', `${BASE}/${id}/${path}`, bob);
      assert.equal(reply.statusCode, 403, `${path}: ${reply.body}`);
      assert.doesNotMatch(reply.body, /pds_/);
    }
    const reviewerCollects = await withSession('POST', `${BASE}/${id}/key`, rita);
    assert.equal(reviewerCollects.statusCode, 403, 'the key is the developer’s, not the reviewer’s');
    const collected = await withSession('POST', `${BASE}/${id}/key`, alice);
    assert.equal(collected.statusCode, 200, collected.body);
  });

  it('gives the signed-in developer an identity token: no grants, it applies and follows their applications', async (t) => {
    const { app, signIn, withSession } = await setup(t, backend);
    const alice = await signIn(ALICE);
    assert.equal(
      (await withSession('POST', '/auth/session/token', { cookie: alice.cookie })).statusCode,
      403,
    );
    const issued = await withSession('POST', '/auth/session/token', alice);
    assert.equal(issued.statusCode, 200, issued.body);
    assert.equal(issued.headers['cache-control'], 'no-store');
    const { token } = json(issued);
    const claims = decodeJwt(token);
    assert.equal(claims.sub, ALICE.id);
    assert.equal(claims.scope, '');
    const applied = await app.inject({
      method: 'POST',
      url: BASE,
      headers: bearer(token),
      payload: { name: 'scripted', grants: ['ping:read'] },
    });
    assert.equal(applied.statusCode, 200, applied.body);
    assert.equal(json(await withSession('GET', BASE, alice)).data.length, 1, 'the same owner');
    assert.equal(
      (await app.inject({ method: 'GET', url: '/ping/Notch', headers: bearer(token) })).statusCode,
      403,
    );
  });

  it('an expired session opens nothing; an expired sign-in is refused', async (t) => {
    const { app, signIn, withSession, goToDiscord, callback } = await setup(t, backend);
    const alice = await signIn(ALICE);
    await sql`update portal_sessions set expires_at = ${Date.now() - 1}`.execute(app.db);
    assert.deepEqual(json(await withSession('GET', '/auth/session', alice)), { signed_in: false });
    const refused = await withSession('POST', BASE, alice, { name: 'x', grants: ['player:read'] });
    assert.equal(refused.statusCode, 401);
    assert.equal(problemName(refused), 'SESSION_INVALID');
    const { query, stateCookie } = await goToDiscord(ALICE);
    await sql`update sign_in_attempts set expires_at = ${Date.now() - 1}`.execute(app.db);
    const late = await callback(query, stateCookie);
    assert.equal(late.statusCode, 400, late.body);
    assert.equal(problemName(late), 'SIGN_IN_STATE_INVALID');
  });

  it('signing out ends the identity tokens the session gave, and what was refreshed from them', async (t) => {
    const { app, signIn, withSession } = await setup(t, backend);
    const alice = await signIn(ALICE);
    const first = json(await withSession('POST', '/auth/session/token', alice)).token as string;
    const refreshed = json(
      await app.inject({ method: 'POST', url: '/auth/refresh', payload: { token: first } }),
    ).token as string;
    const me = (token: string) => app.inject({ method: 'GET', url: '/auth/me', headers: bearer(token) });
    assert.equal((await me(refreshed)).statusCode, 200);
    const other = await signIn(ALICE);
    const kept = json(await withSession('POST', '/auth/session/token', other)).token as string;
    assert.equal((await withSession('POST', '/auth/logout', alice)).statusCode, 204);
    for (const token of [first, refreshed])
      assert.equal((await me(token)).statusCode, 401, 'ended with the session');
    assert.equal((await me(kept)).statusCode, 200, "another session's stays");
  });

  it('ends every identity token asked for while signing out: each is recorded before the end, or refused', async (t) => {
    const { app, signIn, withSession } = await setup(t, backend);
    const me = (token: string) => app.inject({ method: 'GET', url: '/auth/me', headers: bearer(token) });
    const given: string[] = [];
    for (let round = 0; round < 5; round++) {
      const alice = await signIn(ALICE);
      // The sign-out sent while requests for tokens are under way: once the first of them is answered.
      const asked = Array.from({ length: 8 }, () => withSession('POST', '/auth/session/token', alice));
      await Promise.race(asked);
      const out = await withSession('POST', '/auth/logout', alice);
      assert.equal(out.statusCode, 204, out.body);
      const answers = await Promise.all(asked);
      for (const answer of answers) {
        if (answer.statusCode === 200) given.push(json(answer).token);
        else assert.equal(problemName(answer), 'SESSION_INVALID', answer.body);
      }
    }
    assert.ok(given.length > 0, 'some were given before the sign-out');
    for (const token of given) {
      assert.equal(problemName(await me(token)), 'TOKEN_REVOKED', 'ended with the session');
      const refreshed = await app.inject({ method: 'POST', url: '/auth/refresh', payload: { token } });
      assert.equal(refreshed.statusCode, 401, refreshed.body);
    }
  });

  it('an identity token and its refreshes end when the session expires, signed out or not', async (t) => {
    const { app, signIn, withSession } = await setup(t, backend);
    const alice = await signIn(ALICE);
    // The session has three seconds left: room for a token and a refresh (each needs a second left) on a
    // loaded machine, then it ends while the test waits.
    const endsAt = Date.now() + 3000;
    await sql`update portal_sessions set expires_at = ${endsAt}`.execute(app.db);
    const issued = json(await withSession('POST', '/auth/session/token', alice));
    const expiry = (token: string) => Number(decodeJwt(token).exp) * 1000;
    assert.ok(expiry(issued.token) <= endsAt, `${expiry(issued.token)} after the session's end ${endsAt}`);
    assert.equal(Date.parse(issued.expires_at), expiry(issued.token));
    const refresh = (token: string) =>
      app.inject({ method: 'POST', url: '/auth/refresh', payload: { token } });
    const refreshed = await refresh(issued.token);
    assert.equal(refreshed.statusCode, 200, refreshed.body);
    assert.ok(expiry(json(refreshed).token) <= endsAt, 'a refresh does not outlive the session either');
    await new Promise((resolve) => setTimeout(resolve, endsAt - Date.now() + 10));
    // Within the refresh window of its own expiry, but the chain has ended: no refresh.
    const late = await refresh(json(refreshed).token);
    assert.equal(late.statusCode, 401, late.body);
    assert.equal(problemName(late), 'TOKEN_EXPIRED');
    assert.match(json(late).extra[0].developer_reason, /portal session that gave it ended/);
    // And none is given by a session with less than a second left.
    const again = await signIn(ALICE);
    await sql`update portal_sessions set expires_at = ${Date.now() + 500} where ended_at is null and expires_at > ${Date.now() + 5000}`.execute(
      app.db,
    );
    const refused = await withSession('POST', '/auth/session/token', again);
    assert.equal(refused.statusCode, 401, refused.body);
    assert.equal(problemName(refused), 'SESSION_INVALID');
  });

  it("keeps Discord's names showable: no control or bidirectional characters, 64 whole characters", async (t) => {
    const { signIn } = await setup(t, backend);
    const emoji = '😀'.repeat(70);
    const session = await signIn({
      id: '666666666666666666',
      username: 'ev\u0000i\u2028l\u202e',
      global_name: `\u202e${emoji}`,
    });
    const body = json(session.info);
    assert.equal(body.username, 'evil');
    assert.equal(body.global_name, '😀'.repeat(64), 'cut at whole characters, never half an emoji');
  });

  it('Discord failing after the code exchange (users/@me) is a 502, and starts no session', async (t) => {
    const { app, goToDiscord, callback, discord } = await setup(t, backend);
    const { query, stateCookie } = await goToDiscord(ALICE);
    discord.fail({ status: 500 }, { only: 'users' });
    const reply = await callback(query, stateCookie);
    discord.fail(false);
    assert.equal(reply.statusCode, 502, reply.body);
    assert.equal(problemName(reply), 'DISCORD_UNAVAILABLE');
    assert.equal(discord.tokenRequests.at(-1)?.status, 200, 'the code exchange itself succeeded');
    const { rows } = await sql`select 1 from portal_sessions`.execute(app.db);
    assert.equal(rows.length, 0);
  });

  it("shows the owner's usage today: requests, upstream lookups and 429s", async (t) => {
    const { app, config, signIn, withSession } = await setup(t, backend);
    const alice = await signIn(ALICE);
    const token = await issueToken(app, config, { owner: BigInt(ALICE.id), grants: [] });
    for (let round = 0; round < 3; round++)
      await app.inject({ method: 'GET', url: BASE, headers: bearer(token) });
    const me = json(await withSession('GET', '/auth/me', alice));
    assert.equal(me.usage_today.day, new Date().toISOString().slice(0, 10));
    assert.ok(me.usage_today.requests >= 3, JSON.stringify(me.usage_today));
    assert.equal(me.usage_today.refused, 0);
    const other = await issueToken(app, config, { owner: 5n, grants: [] });
    // A request is counted once answered: another owner's first sees none of Alice's, nor itself.
    const theirs = json(await app.inject({ method: 'GET', url: '/auth/me', headers: bearer(other) }));
    assert.equal(theirs.usage_today.requests, 0, "another owner's usage is their own");
  });
});

describeEachBackend('without Discord sign-in configured', (backend) => {
  it('every 401, the docs page and the explorer say where a token comes from: an operator, not a portal', async (t) => {
    const { app } = await buildTestApp(t, { backend });
    for (const url of ['/portal/', '/portal', '/portal/portal.js', '/auth/discord/login']) {
      const portal = await app.inject({ method: 'GET', url });
      assert.equal(portal.statusCode, 404, url);
      assert.match(json(portal).extra[0].developer_reason, /the developer portal is off/, url);
    }
    const page = (await app.inject({ method: 'GET', url: '/docs' })).body;
    assert.match(page, /id="getting-a-token"/);
    assert.match(page, /the developer portal is off on this deployment/);
    const document = json(await app.inject({ method: 'GET', url: '/openapi.json' }));
    assert.match(document.components.securitySchemes.bearerAuth.description, /ask the service's operator/);
    for (const authorization of [undefined, 'Bearer not-a-jwt', 'Basic dXNlcjpwYXNz']) {
      const reply = await app.inject({
        method: 'GET',
        url: BASE,
        headers: authorization ? { authorization } : {},
      });
      assert.equal(reply.statusCode, 401);
      assert.match(
        json(reply).extra[0].developer_reason,
        /Where a token comes from: .*operator/,
        String(authorization),
      );
      assert.doesNotMatch(json(reply).extra[0].developer_reason, /\/portal\//, 'no portal to point at');
      assert.doesNotMatch(json(reply).extra[0].reason, /portal/, 'nor in the reason an end user reads');
    }
    const keyless = await app.inject({
      method: 'POST',
      url: '/auth/token',
      payload: { key: `pds_${'a'.repeat(43)}` },
    });
    assert.match(json(keyless).extra[0].developer_reason, /Where a token comes from/);
    const refresh = await app.inject({ method: 'POST', url: '/auth/refresh', payload: { token: 'x.y.z' } });
    assert.equal(refresh.statusCode, 401);
    assert.match(json(refresh).extra[0].developer_reason, /Where a token comes from/);
    const keyRoute = await app.inject({
      method: 'POST',
      url: `${BASE}/00000000-0000-4000-8000-000000000000/key`,
    });
    assert.match(json(keyRoute).extra[0].developer_reason, /Keys are managed with an identity token/);
  });

  it('the portal and the sign-in routes are 404, and a session cookie opens nothing', async (t) => {
    const { app } = await buildTestApp(t, { backend });
    for (const url of [
      '/auth/discord/login',
      '/auth/discord/callback?code=x&state=y',
      '/auth/session',
      '/portal/',
      '/portal/portal.js',
    ]) {
      const reply = await app.inject({ method: 'GET', url });
      assert.equal(reply.statusCode, 404, `${url}: ${reply.body}`);
    }
    for (const url of ['/auth/logout', '/auth/session/token']) {
      assert.equal((await app.inject({ method: 'POST', url })).statusCode, 404, url);
    }
    const withCookie = await app.inject({
      method: 'GET',
      url: BASE,
      headers: { cookie: 'pds_session=anything' },
    });
    assert.equal(withCookie.statusCode, 401);
    assert.equal(problemName(withCookie), 'TOKEN_MISSING');
  });
});

export type { FakeDiscord };
