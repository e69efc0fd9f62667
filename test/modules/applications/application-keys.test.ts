import assert from 'node:assert/strict';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { it, type TestContext } from 'node:test';
import { decodeJwt } from 'jose';
import { sql } from 'kysely';
import type { Grant } from '../../../src/platform/auth/grants.js';
import { type Backend, describeEachBackend } from '../../helpers/backends.js';
import { buildTestApp } from '../../helpers/build-test-app.js';
import { json, problemName, rateLimitItem } from '../../helpers/replies.js';
import { addWhoamiRoute, bearer, issueToken, testTokens } from '../../helpers/tokens.js';

const BASE = '/admin/developer/applications';
const DEVELOPER = 18446744073709551615n;
const OTHER_DEVELOPER = 2n;
const REVIEWER = 123456789012345678n;
const KEY = /^pds_[A-Za-z0-9_-]{43}$/;

async function setup(t: TestContext, backend: Backend, env: Record<string, string> = {}) {
  const test = await buildTestApp(t, { backend, env });
  addWhoamiRoute(test.app);
  const token = (owner: bigint, grants: readonly Grant[] = []) =>
    issueToken(test.app, test.config, { owner, grants });
  const call = (method: 'GET' | 'POST', url: string, auth?: string, payload?: unknown) =>
    test.app.inject({
      method,
      url,
      headers: auth ? bearer(auth) : {},
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  // Identity tokens: no grants, as the portal and `token issue --owner` give them.
  const developer = await token(DEVELOPER);
  const other = await token(OTHER_DEVELOPER);
  const reviewer = await token(REVIEWER, ['applications:review']);
  /** A new application of `owner`'s, approved by the reviewer; its id. */
  const approved = async (owner = developer, grants: Grant[] = ['player:read', 'ping:read']) => {
    const created = await call('POST', BASE, owner, { name: 'Stats bot', grants });
    assert.equal(created.statusCode, 200, created.body);
    const { id } = json(created);
    const approval = await call('POST', `${BASE}/${id}/approve`, reviewer);
    assert.equal(approval.statusCode, 200, approval.body);
    return id as string;
  };
  const collect = (id: string, auth = developer) => call('POST', `${BASE}/${id}/key`, auth);
  const rotate = (id: string, auth = developer) => call('POST', `${BASE}/${id}/key/rotate`, auth);
  const revokeKey = (id: string, auth = developer) => call('POST', `${BASE}/${id}/key/revoke`, auth);
  const exchange = (key: unknown) => call('POST', '/auth/token', undefined, { key });
  const whoami = (auth: string) => call('GET', '/test/whoami', auth);
  return {
    ...test,
    token,
    call,
    developer,
    other,
    reviewer,
    approved,
    collect,
    rotate,
    revokeKey,
    exchange,
    whoami,
  };
}

const madeUpKey = () => `pds_${randomBytes(32).toString('base64url')}`;

describeEachBackend('application keys', (backend) => {
  it('the owner collects the key once; it is stored only as a hash, and exchanged for tokens as often as needed', async (t) => {
    const { app, approved, collect, exchange, whoami, call, developer } = await setup(t, backend);
    const id = await approved();
    const collected = await collect(id);
    assert.equal(collected.statusCode, 200, collected.body);
    assert.equal(collected.headers['cache-control'], 'no-store', 'no cache keeps a key');
    const { key, status } = json(collected);
    assert.match(key, KEY);
    assert.equal(status.state, 'active');

    const again = await collect(id);
    assert.equal(again.statusCode, 409, again.body);
    assert.equal(problemName(again), 'KEY_ALREADY_COLLECTED');
    assert.doesNotMatch(again.body, /pds_/, 'the key is never shown again');

    const { rows } = await sql<Record<string, unknown>>`select * from application_keys`.execute(app.db);
    assert.equal(rows.length, 1);
    assert.equal(rows[0]?.key_hash, createHash('sha256').update(key).digest('hex'));
    assert.ok(!JSON.stringify(rows).includes(key.slice(4)), 'the key itself is stored nowhere in its table');

    const tokens = new Set<string>();
    for (let round = 0; round < 3; round++) {
      const reply = await exchange(key);
      assert.equal(reply.statusCode, 200, reply.body);
      assert.equal(reply.headers['cache-control'], 'no-store');
      const pair = json(reply);
      assert.deepEqual(Object.keys(pair).sort(), ['expires_at', 'token']);
      tokens.add(pair.token);
      const claims = decodeJwt(pair.token);
      assert.equal(claims.sub, DEVELOPER.toString());
      assert.equal(claims.scope, 'player:read ping:read', "the application's grants");
      const me = await whoami(pair.token);
      assert.equal(me.body, '{"owner":18446744073709551615,"grants":["player:read","ping:read"]}');
    }
    assert.equal(tokens.size, 3, 'a new token each time');
    const read = json(await call('GET', `${BASE}/${id}`, developer));
    assert.equal(read.key.state, 'active');
    assert.ok(read.key.last_used_at, 'the last use is shown');
    assert.doesNotMatch(JSON.stringify(read), /pds_/);
  });

  it('a token that carries grants (one made from a key, say) can neither collect, rotate nor revoke a key', async (t) => {
    const { approved, collect, rotate, revokeKey, exchange, call, developer, token } = await setup(
      t,
      backend,
    );
    const overlay = await approved(developer, ['player:read']);
    const moderation = await approved(developer, ['messenger:read', 'messenger:write']);
    const key = json(await collect(overlay)).key;
    const botToken = json(await exchange(key)).token;
    const operatorToken = await token(DEVELOPER, ['player:read']);
    for (const who of [botToken, operatorToken]) {
      for (const act of [collect, rotate, revokeKey]) {
        for (const id of [overlay, moderation]) {
          const reply = await act(id, who);
          assert.equal(reply.statusCode, 403, reply.body);
          assert.equal(problemName(reply), 'IDENTITY_REQUIRED');
          assert.doesNotMatch(reply.body, /pds_/);
        }
      }
    }
    assert.equal((await exchange(key)).statusCode, 200, 'the key still works: nobody rotated it');
    assert.equal(
      (await collect(moderation)).statusCode,
      200,
      'and the other is still the owner’s to collect',
    );
    assert.equal((await call('GET', `${BASE}/${overlay}`, botToken)).statusCode, 200, 'following is fine');
  });

  it('the key collected twice at once: one wins, the others are 409', async (t) => {
    const { approved, collect, exchange } = await setup(t, backend);
    for (let round = 0; round < 3; round++) {
      const id = await approved();
      const replies = await Promise.all(Array.from({ length: 6 }, () => collect(id)));
      const statuses = replies.map((reply) => reply.statusCode).sort();
      assert.deepEqual(
        statuses,
        [200, 409, 409, 409, 409, 409],
        replies.map((reply) => reply.body).join('\n'),
      );
      const winner = replies.find((reply) => reply.statusCode === 200);
      assert.equal(
        (await exchange(json(winner ?? { body: '{}' }).key)).statusCode,
        200,
        'the winner’s key works',
      );
    }
  });

  it("one developer can neither collect, rotate nor revoke another's key; a reviewer neither", async (t) => {
    const { approved, collect, rotate, revokeKey, other, reviewer, exchange } = await setup(t, backend);
    const id = await approved();
    // Another developer's identity token is not the owner; a reviewer's token carries a grant.
    for (const [who, refusal] of [
      [other, 'NOT_APPLICATION_OWNER'],
      [reviewer, 'IDENTITY_REQUIRED'],
    ] as const) {
      for (const act of [collect, rotate, revokeKey]) {
        const reply = await act(id, who);
        assert.equal(reply.statusCode, 403, reply.body);
        assert.equal(problemName(reply), refusal);
        assert.doesNotMatch(reply.body, /pds_/);
      }
    }
    const mine = await collect(id);
    assert.equal(mine.statusCode, 200, 'the owner still collects it: nobody took it');
    assert.equal((await exchange(json(mine).key)).statusCode, 200);
  });

  it('no key before approval or after the application ends; 404 for an unknown one; 401 without a token', async (t) => {
    const { call, developer, reviewer, collect, rotate, revokeKey } = await setup(t, backend);
    const pending = json(await call('POST', BASE, developer, { name: 'p', grants: ['player:read'] })).id;
    for (const act of [collect, rotate, revokeKey]) {
      const reply = await act(pending);
      assert.equal(reply.statusCode, 409, reply.body);
      assert.equal(problemName(reply), 'KEY_NOT_AVAILABLE');
    }
    const rejected = json(await call('POST', BASE, developer, { name: 'r', grants: ['player:read'] })).id;
    await call('POST', `${BASE}/${rejected}/reject`, reviewer);
    assert.equal(problemName(await collect(rejected)), 'KEY_NOT_AVAILABLE');
    const unknown = randomUUID();
    for (const act of [collect, rotate, revokeKey]) assert.equal((await act(unknown)).statusCode, 404);
    for (const act of [collect, rotate, revokeKey]) assert.equal((await act(pending, '')).statusCode, 401);
    assert.equal((await call('POST', `${BASE}/not-an-id/key`, developer)).statusCode, 400);
  });

  it('rotating ends the old key and every token made from it; revoking too, and rotating then makes a new one', async (t) => {
    const { approved, collect, rotate, revokeKey, exchange, whoami, call, developer } = await setup(
      t,
      backend,
    );
    const id = await approved();
    const first = json(await collect(id)).key;
    const fromFirst = json(await exchange(first)).token;
    const refreshed = json(await call('POST', '/auth/refresh', undefined, { token: fromFirst })).token;

    const rotated = await rotate(id);
    assert.equal(rotated.statusCode, 200, rotated.body);
    assert.equal(rotated.headers['cache-control'], 'no-store');
    const second = json(rotated).key;
    assert.match(second, KEY);
    assert.notEqual(second, first);
    for (const token of [fromFirst, refreshed]) {
      const reply = await whoami(token);
      assert.equal(reply.statusCode, 401, 'a token made from the rotated key');
      assert.equal(problemName(reply), 'TOKEN_REVOKED');
    }
    const old = await exchange(first);
    assert.equal(old.statusCode, 401);
    assert.equal(problemName(old), 'KEY_INVALID');
    assert.match(json(old).extra[0].developer_reason, /rotated/);
    assert.equal(
      problemName(await collect(id)),
      'KEY_ALREADY_COLLECTED',
      'rotation hands the key out itself',
    );
    const fromSecond = json(await exchange(second)).token;
    assert.equal((await whoami(fromSecond)).statusCode, 200);

    const revoked = await revokeKey(id);
    assert.equal(revoked.statusCode, 200, revoked.body);
    assert.equal(json(revoked).state, 'ended');
    assert.equal(json(revoked).ended_reason, 'revoked');
    assert.equal((await whoami(fromSecond)).statusCode, 401);
    assert.equal(problemName(await exchange(second)), 'KEY_INVALID');
    assert.equal(
      json(await call('GET', `${BASE}/${id}`, developer)).currentState,
      'approved',
      'still approved',
    );
    assert.equal((await revokeKey(id)).statusCode, 200, 'revoking an ended key changes nothing');
    assert.equal(problemName(await collect(id)), 'KEY_ALREADY_COLLECTED');
    const third = json(await rotate(id)).key;
    assert.equal(
      (await exchange(third)).statusCode,
      200,
      'a rotation after a revocation makes a working key',
    );
  });

  it('rotations at once, and exchanges racing them: one key stays, and no token of an ended key lives', async (t) => {
    const { app, approved, collect, rotate, exchange, whoami } = await setup(t, backend);
    const id = await approved();
    let live = json(await collect(id)).key as string;
    let interleaved = 0;
    for (let round = 0; round < 6; round++) {
      // Each round races exchanges of the key that is live when it starts against two rotations.
      const replies = await Promise.all([
        exchange(live),
        rotate(id),
        exchange(live),
        rotate(id),
        exchange(live),
      ]);
      const rotations = [replies[1], replies[3]];
      const exchanges = [replies[0], replies[2], replies[4]];
      for (const reply of rotations) assert.equal(reply?.statusCode, 200, reply?.body);
      for (const reply of exchanges) {
        assert.ok(
          reply?.statusCode === 200 || (reply?.statusCode === 401 && problemName(reply) === 'KEY_INVALID'),
          `an exchange racing a rotation: ${reply?.statusCode} ${reply?.body}`,
        );
      }
      const { rows } = await sql<{ id: string }>`
        select id from application_keys where application_id = ${id} and ended_at is null`.execute(app.db);
      assert.equal(rows.length, 1, 'exactly one key has not ended');
      const working: string[] = [];
      for (const reply of rotations) {
        const key = json(reply ?? { body: '{}' }).key as string;
        if ((await exchange(key)).statusCode === 200) working.push(key);
      }
      assert.equal(working.length, 1, 'one of the two rotated keys works: the one made last');
      for (const reply of exchanges) {
        if (reply?.statusCode !== 200) continue;
        interleaved++;
        assert.equal((await whoami(json(reply).token)).statusCode, 401, 'a token of an ended key survived');
      }
      live = working[0] as string;
    }
    t.diagnostic(`${interleaved} exchanges won the race against a rotation (their tokens were then ended)`);
  });

  it('rotations racing refreshes of tokens made from the key leave none of them alive', async (t) => {
    const { approved, collect, rotate, exchange, whoami, call } = await setup(t, backend);
    const id = await approved();
    let key = json(await collect(id)).key as string;
    for (let round = 0; round < 8; round++) {
      const token = json(await exchange(key)).token as string;
      const refresh = () => call('POST', '/auth/refresh', undefined, { token });
      const [first, rotated, second] = await Promise.all([refresh(), rotate(id), refresh()]);
      assert.equal(rotated?.statusCode, 200, rotated?.body);
      for (const reply of [first, second]) {
        assert.ok([200, 401].includes(reply?.statusCode ?? 0), `${reply?.statusCode} ${reply?.body}`);
        if (reply?.statusCode === 200)
          assert.equal(
            (await whoami(json(reply).token)).statusCode,
            401,
            `round ${round}: a refreshed token lived`,
          );
      }
      assert.equal((await whoami(token)).statusCode, 401);
      key = json(rotated).key;
    }
  });

  it('an application approved before keys existed: collect and revoke say to rotate, rotating makes its first key', async (t) => {
    const { app, config, approved, collect, rotate, revokeKey, exchange, whoami } = await setup(t, backend);
    const id = await approved();
    // As the upgrade leaves it: approved, with no key row, and the token chain its approval issued.
    await sql`delete from application_keys where application_id = ${id}`.execute(app.db);
    const credential = await testTokens(app, config).issue(DEVELOPER, ['player:read', 'ping:read']);
    await sql`update applications set credential_jti = ${credential.jti} where id = ${id}`.execute(app.db);
    assert.equal((await whoami(credential.token)).statusCode, 200);
    for (const act of [collect, revokeKey]) {
      const reply = await act(id);
      assert.equal(reply.statusCode, 409, reply.body);
      assert.equal(problemName(reply), 'KEY_NOT_AVAILABLE');
      assert.match(json(reply).extra[0].developer_reason, /rotate/);
    }
    assert.equal((await whoami(credential.token)).statusCode, 200, 'a refused change changes nothing');
    const first = await rotate(id);
    assert.equal(first.statusCode, 200, first.body);
    assert.equal((await exchange(json(first).key)).statusCode, 200);
    assert.equal(
      (await whoami(credential.token)).statusCode,
      401,
      'rotating ended the old credential’s chain',
    );
  });

  it('POST /auth/token refuses made-up, malformed and missing keys: 401 and 400, never a 500', async (t) => {
    const { exchange, app } = await setup(t, backend);
    for (const key of [madeUpKey(), madeUpKey()]) {
      const reply = await exchange(key);
      assert.equal(reply.statusCode, 401, reply.body);
      assert.equal(problemName(reply), 'KEY_INVALID');
      assert.doesNotMatch(reply.body, /pds_/, 'the key is not echoed');
    }
    for (const key of [
      '',
      'pds_short',
      `pds_${'a'.repeat(44)}`,
      `xyz_${'a'.repeat(43)}`,
      5,
      null,
      ['pds_'],
      'a'.repeat(5000),
    ]) {
      const reply = await exchange(key);
      assert.equal(reply.statusCode, 400, `${JSON.stringify(key).slice(0, 40)}: ${reply.body}`);
    }
    for (const payload of ['{', '[]', '{"key": "x", "extra": 1}']) {
      const reply = await app.inject({
        method: 'POST',
        url: '/auth/token',
        headers: { 'content-type': 'application/json' },
        payload,
      });
      assert.equal(reply.statusCode, 400, reply.body);
    }
    const noBody = await app.inject({ method: 'POST', url: '/auth/token' });
    assert.equal(noBody.statusCode, 400, noBody.body);
  });

  it('limits POST /auth/token per client address: a brute force gets 429', async (t) => {
    const { exchange, approved, collect } = await setup(t, backend, { RATE_LIMIT_AUTH_PER_MINUTE: '5' });
    const id = await approved();
    const key = json(await collect(id)).key;
    const replies = [];
    for (let attempt = 0; attempt < 8; attempt++) replies.push(await exchange(madeUpKey()));
    assert.deepEqual(
      replies.map((reply) => reply.statusCode),
      [401, 401, 401, 401, 401, 429, 429, 429],
    );
    const limited = replies.at(-1);
    assert.equal(problemName(limited ?? { body: '{}' }), 'RATE_LIMITED');
    assert.ok(Number(limited?.headers['retry-after']) >= 1);
    assert.equal(rateLimitItem(limited?.headers.ratelimit, 'address')?.r, 0);
    assert.equal((await exchange(key)).statusCode, 429, 'the limit is per address, whatever the key');
  });

  it('an identity token applies and follows its own applications, and opens nothing else', async (t) => {
    const { call, developer, other, whoami } = await setup(t, backend);
    const created = await call('POST', BASE, developer, { name: 'bot', grants: ['player:read'] });
    assert.equal(created.statusCode, 200, created.body);
    const { id } = json(created);
    assert.equal((await call('GET', `${BASE}/${id}`, developer)).statusCode, 200);
    assert.equal(json(await call('GET', BASE, developer)).data.length, 1);
    assert.equal((await call('GET', `${BASE}/${id}`, other)).statusCode, 403, "not another's");
    assert.equal(json(await call('GET', BASE, other)).data.length, 0);
    assert.equal((await call('GET', '/auth/me', developer)).statusCode, 200);
    const player = await call('GET', '/player/Notch', developer);
    assert.equal(player.statusCode, 403, player.body);
    assert.equal(problemName(player), 'GRANT_MISSING');
    assert.equal((await whoami(developer)).statusCode, 200, 'a route needing no grant');
    assert.equal((await call('POST', `${BASE}/${id}/approve`, developer)).statusCode, 403);
    assert.equal((await call('POST', `${BASE}/${id}/withdraw`, developer)).statusCode, 200);
  });
});
