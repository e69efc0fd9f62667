import assert from 'node:assert/strict';
import { it, type TestContext } from 'node:test';
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose';
import { sql } from 'kysely';
import type { TokensTables } from '../../../src/modules/tokens/tokens.tables.js';
import { executorOf, inTransaction } from '../../../src/platform/db/transactions.js';
import { type Backend, describeEachBackend, describeOrSkip } from '../../helpers/backends.js';
import { buildTestApp, TEST_JWT_SECRET } from '../../helpers/build-test-app.js';
import { skipWithoutRedis } from '../../helpers/environment.js';
import { eventually } from '../../helpers/poll.js';
import {
  addWhoamiRoute,
  bearer,
  issueToken,
  revokeFromCommandLine,
  testTokens,
} from '../../helpers/tokens.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

async function setup(t: TestContext, backend: Backend, env: Record<string, string> = {}) {
  const test = await buildTestApp(t, { backend, env });
  addWhoamiRoute(test.app, 'player:read');
  const refresh = (payload: unknown) =>
    test.app.inject({ method: 'POST', url: '/auth/refresh', payload: payload as object });
  const whoami = (token: string) =>
    test.app.inject({ method: 'GET', url: '/test/whoami', headers: bearer(token) });
  return { ...test, refresh, whoami };
}

const problemName = (reply: { body: string }) => JSON.parse(reply.body).extra?.[0]?.name;

describeEachBackend('tokens', (backend) => {
  it('issues a token that opens a guarded route, with the owner exact', async (t) => {
    const { app, config, whoami } = await setup(t, backend);
    const token = await issueToken(app, config, { owner: 18446744073709551615n, grants: ['player:read'] });
    const refreshed = await app.inject({ method: 'POST', url: '/auth/refresh', payload: { token } });
    assert.equal(refreshed.statusCode, 200, refreshed.body);
    assert.equal(refreshed.headers['cache-control'], 'no-store', 'no cache keeps a token');
    const reply = await whoami(token);
    assert.equal(reply.statusCode, 200, reply.body);
    assert.equal(reply.body, '{"owner":18446744073709551615,"grants":["player:read"]}');
    assert.deepEqual(decodeProtectedHeader(token), { alg: 'HS256', typ: 'at+jwt' });
    const claims = decodeJwt(token);
    assert.equal(claims.sub, '18446744073709551615');
    assert.equal(claims.scope, 'player:read');
    assert.equal(claims.iss, 'player-data-service');
    assert.equal(claims.aud, 'player-data-api');
    assert.equal(Number(claims.exp) - Number(claims.iat), 3600);
  });

  it('guards: 401 without a token or with a bad one, 403 without the grant, with RFC 6750 challenges', async (t) => {
    const { app, config, whoami } = await setup(t, backend);
    const missing = await app.inject({ method: 'GET', url: '/test/whoami' });
    assert.equal(missing.statusCode, 401);
    assert.equal(problemName(missing), 'TOKEN_MISSING');
    assert.equal(missing.headers['www-authenticate'], 'Bearer realm="player-data-service"');
    const basic = await app.inject({
      method: 'GET',
      url: '/test/whoami',
      headers: { authorization: 'Basic dXNlcjpwYXNz' },
    });
    assert.equal(basic.statusCode, 401);
    assert.equal(problemName(basic), 'TOKEN_INVALID');
    const garbage = await whoami('not-a-jwt');
    assert.equal(garbage.statusCode, 401);
    assert.match(String(garbage.headers['www-authenticate']), /error="invalid_token"/);
    const noGrant = await whoami(await issueToken(app, config, { grants: ['ping:read'] }));
    assert.equal(noGrant.statusCode, 403);
    assert.equal(problemName(noGrant), 'GRANT_MISSING');
    assert.equal(
      noGrant.headers['www-authenticate'],
      'Bearer realm="player-data-service", error="insufficient_scope", scope="player:read"',
    );
  });

  it('refuses an expired token on a guarded route, and a revoked one', async (t) => {
    const test = await setup(t, backend);
    const { app, config, whoami } = test;
    const old = await testTokens(app, config, () => Date.now() - 2 * HOUR_MS).issue(1n, ['player:read']);
    const expired = await whoami(old.token);
    assert.equal(expired.statusCode, 401);
    assert.equal(problemName(expired), 'TOKEN_EXPIRED');
    const current = await testTokens(app, config).issue(1n, ['player:read']);
    assert.equal((await whoami(current.token)).statusCode, 200);
    assert.equal(await revokeFromCommandLine(test, current.jti), 1);
    // Another process's revocation is heard within a few ms (token-records.test.ts measures how soon).
    let revoked: Awaited<ReturnType<typeof whoami>> | undefined;
    await eventually('the revoked token refused', async () => {
      revoked = await whoami(current.token);
      return revoked.statusCode === 401;
    });
    assert.equal(revoked && problemName(revoked), 'TOKEN_REVOKED');
  });

  it('refreshes: a new token with the same owner and grants, a new jti, and expires_at matching exp', async (t) => {
    const { app, config, refresh, whoami } = await setup(t, backend);
    const first = await testTokens(app, config).issue(18446744073709551614n, ['player:read', 'ping:read']);
    const reply = await refresh({ token: first.token, expires_at: first.expiresAt.toISOString() });
    assert.equal(reply.statusCode, 200, reply.body);
    const pair = reply.json();
    assert.deepEqual(Object.keys(pair).sort(), ['expires_at', 'token']);
    assert.match(pair.expires_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const before = decodeJwt(first.token);
    const after = decodeJwt(pair.token);
    assert.equal(after.sub, '18446744073709551614');
    assert.equal(after.scope, before.scope);
    assert.notEqual(after.jti, before.jti);
    assert.equal(Date.parse(pair.expires_at), Number(after.exp) * 1000);
    assert.equal((await whoami(pair.token)).statusCode, 200);
    // Refreshing again from the new token works: the chain goes on.
    assert.equal((await refresh({ token: pair.token })).statusCode, 200);
  });

  it('detects reuse: presenting an exchanged token again (no grace) revokes the whole chain', async (t) => {
    const { app, config, refresh, whoami } = await setup(t, backend, { TOKEN_REFRESH_GRACE_SECONDS: '0' });
    const first = await issueToken(app, config, { grants: ['player:read'] });
    const second = (await refresh({ token: first })).json().token;
    const third = (await refresh({ token: second })).json().token;
    assert.equal((await whoami(third)).statusCode, 200);
    const reused = await refresh({ token: first });
    assert.equal(reused.statusCode, 401);
    assert.equal(problemName(reused), 'TOKEN_REUSED');
    for (const token of [first, second, third]) {
      const reply = await whoami(token);
      assert.equal(reply.statusCode, 401);
      assert.equal(problemName(reply), 'TOKEN_REVOKED');
    }
    assert.equal(problemName(await refresh({ token: third })), 'TOKEN_REVOKED');
  });

  it('refreshes a token expired within the refresh window, not beyond it', async (t) => {
    const { app, config, refresh } = await setup(t, backend);
    const recent = await testTokens(app, config, () => Date.now() - 2 * DAY_MS).issue(7n, ['ping:read']);
    assert.equal((await refresh({ token: recent.token })).statusCode, 200);
    const ancient = await testTokens(app, config, () => Date.now() - 9 * DAY_MS).issue(7n, ['ping:read']);
    const tooOld = await refresh({ token: ancient.token });
    assert.equal(tooOld.statusCode, 401);
    assert.equal(problemName(tooOld), 'TOKEN_EXPIRED');
    assert.match(tooOld.json().extra[0].developer_reason, /beyond the refresh window/);
  });

  it('refreshes up to the refresh window’s end: a minute before it, not a minute after', async (t) => {
    const { app, config } = await setup(t, backend);
    let now = Date.now();
    const tokens = testTokens(app, config, () => now);
    const windowMs = config.auth.refreshWindowSeconds * 1000;
    const inside = await tokens.issue(7n, ['ping:read']);
    const outside = await tokens.issue(7n, ['ping:read']);
    now = inside.expiresAt.getTime() + windowMs - 60_000;
    assert.ok((await tokens.refresh(inside.token)).token, 'a minute before the window ends');
    now = outside.expiresAt.getTime() + windowMs + 60_000;
    await assert.rejects(
      tokens.refresh(outside.token),
      (error: Error & { problems?: { kind: { code: number } }[] }) => {
        assert.equal(error.problems?.[0]?.kind.code, 11003, 'TOKEN_EXPIRED');
        return true;
      },
    );
  });

  it('answers 400 when expires_at differs from the token', async (t) => {
    const { app, config, refresh } = await setup(t, backend);
    const issued = await testTokens(app, config).issue(7n, ['ping:read']);
    const reply = await refresh({
      token: issued.token,
      expires_at: new Date(issued.expiresAt.getTime() + 1000).toISOString(),
    });
    assert.equal(reply.statusCode, 400);
    assert.equal(problemName(reply), 'EXPIRES_AT_MISMATCH');
    // Nothing was consumed: the token still refreshes.
    assert.equal((await refresh({ token: issued.token })).statusCode, 200);
  });

  it('refuses forged and foreign tokens: alg none, another secret, wrong iss, aud or typ, not a JWT', async (t) => {
    const { app, config, refresh, whoami } = await setup(t, backend);
    const genuine = await testTokens(app, config).issue(7n, ['player:read']);
    const claims = decodeJwt(genuine.token);
    const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const sign = (secret: string, header: Record<string, string>, overrides: Record<string, unknown> = {}) =>
      new SignJWT({ ...claims, ...overrides })
        .setProtectedHeader({ alg: 'HS256', ...header })
        .sign(new TextEncoder().encode(secret));
    const forged = {
      'alg none': `${encode({ alg: 'none', typ: 'at+jwt' })}.${encode(claims)}.`,
      'another secret': await sign('another-secret-of-at-least-32-bytes-long', { typ: 'at+jwt' }),
      'wrong iss': await sign(TEST_JWT_SECRET, { typ: 'at+jwt' }, { iss: 'someone-else' }),
      'wrong aud': await sign(TEST_JWT_SECRET, { typ: 'at+jwt' }, { aud: 'another-api' }),
      'wrong typ': await sign(TEST_JWT_SECRET, { typ: 'JWT' }),
      'a non-JWT string': 'hello.world',
      'a tampered payload': `${genuine.token.split('.')[0]}.${encode({ ...claims, scope: 'applications:review' })}.${genuine.token.split('.')[2]}`,
    };
    for (const [what, token] of Object.entries(forged)) {
      const refreshed = await refresh({ token });
      assert.equal(refreshed.statusCode, 401, `${what}: ${refreshed.body}`);
      assert.equal(problemName(refreshed), 'TOKEN_INVALID', what);
      assert.ok(!refreshed.body.includes(token), `${what}: the token is echoed`);
      assert.equal((await whoami(token)).statusCode, 401, what);
    }
    // An expired token (within the refresh window) is verified in full too: issuer, audience and type.
    const expired = await testTokens(app, config, () => Date.now() - 2 * DAY_MS).issue(7n, ['player:read']);
    const expiredClaims = decodeJwt(expired.token);
    const signExpired = (header: Record<string, string>, overrides: Record<string, unknown>) =>
      new SignJWT({ ...expiredClaims, ...overrides })
        .setProtectedHeader({ alg: 'HS256', ...header })
        .sign(new TextEncoder().encode(TEST_JWT_SECRET));
    const forgedExpired = {
      'wrong iss, expired': await signExpired({ typ: 'at+jwt' }, { iss: 'someone-else' }),
      'wrong aud, expired': await signExpired({ typ: 'at+jwt' }, { aud: 'another-api' }),
      'wrong typ, expired': await signExpired({ typ: 'JWT' }, {}),
    };
    for (const [what, token] of Object.entries(forgedExpired)) {
      const refreshed = await refresh({ token });
      assert.equal(refreshed.statusCode, 401, `${what}: ${refreshed.body}`);
      assert.equal(problemName(refreshed), 'TOKEN_INVALID', what);
    }
    assert.equal((await refresh({ token: expired.token })).statusCode, 200, 'the genuine one refreshes');
  });

  it('refuses a well-signed token whose jti is malformed or whose claims differ from its record', async (t) => {
    const { app, config, refresh, whoami } = await setup(t, backend);
    const genuine = await testTokens(app, config).issue(7n, ['player:read']);
    const claims = decodeJwt(genuine.token);
    const sign = (overrides: Record<string, unknown>) =>
      new SignJWT({ ...claims, ...overrides })
        .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
        .sign(new TextEncoder().encode(TEST_JWT_SECRET));
    const altered: Record<string, Record<string, unknown>> = {
      'a NUL byte in the jti': { jti: `${claims.jti}\u0000` },
      'a jti that is not a UUID': { jti: "x' or '1'='1" },
      'an upper-case jti': { jti: String(claims.jti).toUpperCase() },
      'another owner': { sub: '8' },
      'a later expiry': { exp: Number(claims.exp) + 3600 },
      'more grants': { scope: 'player:read applications:review' },
      'another issue time': { iat: Number(claims.iat) - 10 },
    };
    for (const [what, overrides] of Object.entries(altered)) {
      const token = await sign(overrides);
      const used = await whoami(token);
      assert.equal(used.statusCode, 401, `${what}: ${used.body}`);
      assert.equal(problemName(used), 'TOKEN_INVALID', what);
      const refreshed = await refresh({ token });
      assert.equal(refreshed.statusCode, 401, `${what}: ${refreshed.body}`);
      assert.equal(problemName(refreshed), 'TOKEN_INVALID', what);
    }
    assert.equal((await whoami(genuine.token)).statusCode, 200, 'the genuine token still works');
  });

  it('answers a malformed refresh body with 400', async (t) => {
    const { refresh } = await setup(t, backend);
    const cases: [unknown, string][] = [
      [{}, 'MISSING_FIELD'],
      [{ token: 42 }, 'INVALID_FIELD'],
      [{ token: '' }, 'INVALID_FIELD'],
      [{ token: 'a', expires_at: 'tomorrow' }, 'INVALID_FIELD'],
      [{ token: 'a', extra: 1 }, 'UNKNOWN_FIELD'],
    ];
    for (const [payload, name] of cases) {
      const reply = await refresh(payload);
      assert.equal(reply.statusCode, 400, JSON.stringify(payload));
      assert.equal(reply.json().success, false);
      assert.equal(problemName(reply), name, JSON.stringify(payload));
    }
  });

  it('of 100 concurrent refreshes of one token without a grace, exactly one succeeds', async (t) => {
    const { app, config, refresh } = await setup(t, backend, { TOKEN_REFRESH_GRACE_SECONDS: '0' });
    const token = await issueToken(app, config, { grants: ['ping:read'] });
    const replies = await Promise.all(Array.from({ length: 100 }, () => refresh({ token })));
    const statuses = replies.map((reply) => reply.statusCode);
    assert.equal(statuses.filter((status) => status === 200).length, 1, JSON.stringify(statuses));
    assert.equal(statuses.filter((status) => status === 401).length, 99);
    const { count } = (await sql<{ count: number }>`select count(*) as count from tokens`.execute(app.db))
      .rows[0] ?? { count: 0 };
    assert.equal(Number(count), 2, 'one successor token, not more');
  });

  it('within the grace, shards refreshing one token at once all get the one successor, which works', async (t) => {
    const { app, config, refresh, whoami } = await setup(t, backend);
    const token = await issueToken(app, config, { grants: ['ping:read', 'player:read'] });
    const replies = await Promise.all(Array.from({ length: 20 }, () => refresh({ token })));
    assert.deepEqual(
      replies.map((reply) => reply.statusCode),
      replies.map(() => 200),
      replies.map((reply) => reply.body).join('\n'),
    );
    const successors = new Set(replies.map((reply) => reply.body));
    assert.equal(successors.size, 1, 'one successor, answered to every shard: token and expiry alike');
    const successor = replies[0]?.json().token as string;
    assert.notEqual(successor, token);
    assert.equal((await whoami(successor)).statusCode, 200);
    const { count } = (await sql<{ count: number }>`select count(*) as count from tokens`.execute(app.db))
      .rows[0] ?? { count: 0 };
    assert.equal(Number(count), 2, 'one successor stored');
    // A shard restarted from the old token within the grace gets it too; the successor goes on refreshing.
    assert.equal((await refresh({ token })).json().token, successor);
    const next = await refresh({ token: successor });
    assert.equal(next.statusCode, 200);
    assert.equal((await whoami(next.json().token)).statusCode, 200);
    assert.equal(
      (await whoami(successor)).statusCode,
      200,
      'an exchanged token stays valid until it expires',
    );
  });

  it('after the grace, presenting an exchanged token again revokes the chain; a revoked successor is never handed out', async (t) => {
    const { app, config, whoami } = await setup(t, backend);
    let now = Date.now();
    const tokens = testTokens(app, config, () => now);
    const first = await tokens.issue(5n, ['player:read']);
    const second = await tokens.refresh(first.token);
    now += 29_000;
    assert.equal((await tokens.refresh(first.token)).token, second.token, 'within 30 s: the same successor');
    now += 2_000;
    await assert.rejects(
      tokens.refresh(first.token),
      (error: Error & { problems?: { kind: { code: number } }[] }) => {
        assert.equal(error.problems?.[0]?.kind.code, 11005, 'TOKEN_REUSED');
        return true;
      },
    );
    assert.equal((await whoami(second.token)).statusCode, 401, 'the chain is revoked');

    // Within the grace, a token whose successor was exchanged too answers the chain's current token.
    const a = await tokens.issue(7n, ['player:read']);
    const b = await tokens.refresh(a.token);
    const c = await tokens.refresh(b.token);
    assert.equal((await tokens.refresh(a.token)).token, c.token, 'the current token, not the exchanged one');
    assert.equal((await tokens.refresh(b.token)).token, c.token);
    assert.equal((await whoami(c.token)).statusCode, 200);

    // Within the grace, but the chain was revoked meanwhile: no successor comes back.
    const other = await tokens.issue(6n, ['player:read']);
    const next = await tokens.refresh(other.token);
    assert.equal(await tokens.revoke(next.jti), 2);
    await assert.rejects(tokens.refresh(other.token));
    // Only the successor revoked (a revocation landing between the two reads of a refresh): not handed out.
    const lone = await tokens.issue(8n, ['player:read']);
    const loneNext = await tokens.refresh(lone.token);
    await sql`update tokens set revoked_at = ${now}, revoked_reason = 'revoked' where jti = ${loneNext.jti}`.execute(
      app.db,
    );
    await assert.rejects(
      tokens.refresh(lone.token),
      (error: Error & { problems?: { kind: { code: number } }[] }) => {
        assert.equal(error.problems?.[0]?.kind.code, 11004, 'TOKEN_REVOKED');
        return true;
      },
    );
  });

  it("issues a token inside a caller's transaction: it exists only if the caller's work commits", async (t) => {
    const { app, config, whoami } = await setup(t, backend);
    const tokens = testTokens(app, config);
    let rolledBack: string | undefined;
    await assert.rejects(
      inTransaction(executorOf(app.db), async (transaction) => {
        rolledBack = (await tokens.issue(5n, ['player:read'], { within: transaction })).token;
        throw new Error('the caller failed after issuing');
      }),
      /the caller failed/,
    );
    assert.ok(rolledBack);
    const refused = await whoami(rolledBack);
    assert.equal(refused.statusCode, 401);
    assert.equal(problemName(refused), 'TOKEN_INVALID');

    const committed = await inTransaction(executorOf(app.db), async (transaction) =>
      // A service called by another joins its transaction rather than starting one of its own.
      inTransaction(transaction, async (joined) => {
        assert.equal(joined, transaction);
        return (await tokens.issue(5n, ['player:read'], { within: joined })).token;
      }),
    );
    assert.equal((await whoami(committed)).statusCode, 200);
  });

  it('keeps no token text in the database', async (t) => {
    const { app, config, refresh } = await setup(t, backend);
    const token = await issueToken(app, config);
    const next = (await refresh({ token })).json().token as string;
    const rows = await app.db.withTables<TokensTables>().selectFrom('tokens').selectAll().execute();
    const stored = JSON.stringify(rows);
    for (const text of [token, next]) {
      for (const part of text.split('.')) assert.ok(!stored.includes(part), 'a token part is stored');
    }
  });

  it('rate limits /auth/refresh per client address with a 429 ErrorResponse', async (t) => {
    const { app, refresh } = await setup(t, backend, { RATE_LIMIT_AUTH_PER_MINUTE: '3' });
    for (let attempt = 0; attempt < 3; attempt++)
      assert.equal((await refresh({ token: 'x.y.z' })).statusCode, 401);
    const limited = await refresh({ token: 'x.y.z' });
    assert.equal(limited.statusCode, 429);
    assert.equal(problemName(limited), 'RATE_LIMITED');
    assert.ok(Number(limited.headers['retry-after']) > 0);
    const other = await app.inject({
      method: 'POST',
      url: '/auth/refresh',
      payload: { token: 'x.y.z' },
      remoteAddress: '10.0.0.9',
    });
    assert.equal(other.statusCode, 401, 'another address has its own budget');
  });
});

describeOrSkip('rate limits shared through Redis', { skip: skipWithoutRedis }, () => {
  it('counts one budget for two instances', async (t) => {
    const env = { RATE_LIMIT_AUTH_PER_MINUTE: '4' };
    const first = await buildTestApp(t, { redis: true, env });
    const second = await buildTestApp(t, { redis: true, env, redisKeyPrefix: first.config.redisKeyPrefix });
    const address = `10.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.7`;
    const refresh = (app: typeof first.app) =>
      app.inject({
        method: 'POST',
        url: '/auth/refresh',
        payload: { token: 'x.y.z' },
        remoteAddress: address,
      });
    const statuses = [];
    for (const app of [first.app, second.app, first.app, second.app, first.app, second.app]) {
      const reply = await refresh(app);
      statuses.push(`${reply.statusCode} ${problemName(reply)}`);
    }
    assert.deepEqual(statuses, [
      ...Array(4).fill('401 TOKEN_INVALID'),
      '429 RATE_LIMITED',
      '429 RATE_LIMITED',
    ]);
  });
});
