import assert from 'node:assert/strict';
import { it } from 'node:test';
import { sql } from 'kysely';
import { describeEachBackend } from '../../helpers/backends.js';
import { json, problems } from '../../helpers/replies.js';
import { issueToken } from '../../helpers/tokens.js';
import { everyRow, logText, newToken, PATH, setup, USER } from './interaction-logs.js';

describeEachBackend('interaction logs, hostile input', (backend) => {
  it('reads `since` exactly: a leap second is the next minute, a date that does not exist is a 400', async (t) => {
    const { post, list } = await setup(t, backend);
    assert.equal((await post(logText())).statusCode, 200);
    for (const since of ['2016-12-31T23:59:60Z', '2016-12-31T23:59:60.5+00:00', '2024-02-29T12:00:00Z']) {
      const reply = await list(`since=${encodeURIComponent(since)}`);
      assert.equal(reply.statusCode, 200, `${since}: ${reply.body}`);
      assert.equal(json(reply).data.length, 1, since);
    }
    const future = await list(`since=${encodeURIComponent('2999-12-31T23:59:60Z')}`);
    assert.equal(json(future).data.length, 0);
    for (const since of [
      '2026-02-30T00:00:00Z',
      '2025-02-29T00:00:00Z',
      '2026-11-22T24:00:00Z',
      '2026-11-22T23:60:00Z',
      '2026-11-22T03:05:17',
      '2026-11-22T03:05:17+25:00',
      '+002026-11-22T03:05:17Z',
      '1795316717000',
    ]) {
      const reply = await list(`since=${encodeURIComponent(since)}`);
      assert.equal(reply.statusCode, 400, `${since}: ${reply.body}`);
      assert.match(problems(reply)[0]?.developer_reason ?? '', /^query\/since must be an RFC 3339 time/);
    }
  });

  it('refuses IDs of 0 in any spelling, numbers beyond a double, and names that show nothing', async (t) => {
    const { post, count } = await setup(t, backend);
    const cases: [string, string, RegExp][] = [
      ['user_id 0', logText({ user: '0' }), /^body\/interaction\/user_id /],
      ['user_id "0"', logText({ user: '0', idsAs: 'string' }), /^body\/interaction\/user_id /],
      ['user_id -0', logText({ user: '-0' }), /^body\/interaction\/user_id /],
      ['server_id 0.0', logText({ server: '0.0' }), /^body\/interaction\/server_id /],
      ['1e400 in options', logText({ options: '{"huge":1e400}' }), /number too large/],
      ['a blank username', logText({ username: '   ' }), /^body\/user\/username /],
      ['a zero-width username', logText({ username: '\\u200b\\u200d' }), /^body\/user\/username /],
      ['a BOM username', logText({ username: '\\ufeff' }), /^body\/user\/username /],
      [
        'a blank command name',
        logText().replace('"interaction_name":"stats"', '"interaction_name":"\\t"'),
        /^body\/interaction\/interaction_name /,
      ],
    ];
    for (const [what, text, reason] of cases) {
      const reply = await post(text);
      assert.equal(reply.statusCode, 400, `${what}: ${reply.body}`);
      assert.ok(
        problems(reply).some((problem) => reason.test(problem.developer_reason)),
        `${what}: ${reply.body}`,
      );
    }
    assert.equal(await count('interaction_logs'), 0);
    assert.equal(await count('interaction_users'), 0);
  });

  it('checks the token before the body: a caller without the grant learns nothing of what it takes', async (t) => {
    const { app, config, reader } = await setup(t, backend);
    const send = (headers: Record<string, string>, payload: string) =>
      app.inject({
        method: 'POST',
        url: PATH,
        headers: { 'content-type': 'application/json', ...headers },
        payload,
      });
    const anonymous = await send({}, '{"not":"a log"}');
    assert.equal(anonymous.statusCode, 401, anonymous.body);
    assert.equal(problems(anonymous)[0]?.name, 'TOKEN_MISSING');
    const forged = await send({ authorization: 'Bearer not.a.token' }, '{"not":"a log"}');
    assert.equal(forged.statusCode, 401, forged.body);
    const ungranted = await send({ authorization: `Bearer ${reader}` }, '{"not":"a log"}');
    assert.equal(ungranted.statusCode, 403, ungranted.body);
    const listing = await app.inject({ method: 'GET', url: `${PATH}?limit=0&user_id=abc` });
    assert.equal(listing.statusCode, 401, listing.body);
    const other = await issueToken(app, config, { grants: ['player:read'] });
    const wrongGrant = await app.inject({
      method: 'GET',
      url: `${PATH}?since=yesterday`,
      headers: { authorization: `Bearer ${other}` },
    });
    assert.equal(wrongGrant.statusCode, 403, wrongGrant.body);
  });

  it('never repeats the token in a 400: bad escapes, bad unicode, numbers and strings cut short', async (t) => {
    const { post, logs } = await setup(t, backend, { LOG_LEVEL: 'trace' });
    const secret = `TOPSECRET${Date.now()}`;
    const valid = logText({ token: secret });
    const bodies = [
      valid.replace(secret, `${secret}\\uQZ9X`),
      valid.replace(secret, `\\u${secret}`),
      valid.replace(secret, `${secret}\\q`),
      valid.replace(`"${secret}"`, `-${secret}`),
      valid.replace(`"${secret}"`, `1${secret}`),
      valid.replace(`"${secret}"`, `tru${secret}`),
      valid.replace(secret, `${secret}\u0001`),
      valid.slice(0, valid.indexOf(secret) + secret.length),
      valid.replace(secret, `${secret}é`),
      valid.replace(secret, `${secret}\\u00e9`),
    ];
    for (const body of bodies) {
      const reply = await post(body);
      assert.equal(reply.statusCode, 400, `${body}: ${reply.body}`);
      assert.doesNotMatch(reply.body, new RegExp(secret), reply.body);
      // Not even a piece of it: the parser's own messages quote the characters it stopped at.
      assert.doesNotMatch(reply.body, /QZ9X|\\q|'/, reply.body);
    }
    for (const line of logs.raw) assert.doesNotMatch(line, new RegExp(secret), line);
  });

  it('never quotes a URL the router cannot take: a secret in its query stays out of the answer', async (t) => {
    const { app, reader } = await setup(t, backend);
    const secret = `SEKRET${Date.now()}`;
    const badEncoding = await app.inject({
      method: 'GET',
      url: `${PATH}%ZZ?interaction_token=${secret}`,
      headers: { authorization: `Bearer ${reader}` },
    });
    assert.equal(badEncoding.statusCode, 400, badEncoding.body);
    assert.doesNotMatch(badEncoding.body, new RegExp(secret));
    const tooLong = await app.inject({
      method: 'GET',
      url: `/messenger/user/${'9'.repeat(150)}/profile?interaction_token=${secret}`,
      headers: { authorization: `Bearer ${reader}` },
    });
    assert.equal(tooLong.statusCode, 414, tooLong.body);
    assert.equal(problems(tooLong)[0]?.name, 'URI_TOO_LONG');
    assert.equal(tooLong.json().cause, 'URI too long');
    assert.doesNotMatch(tooLong.body, new RegExp(`${secret}|9999999999`));
    // No route answers it (the router refuses the segment), so the conformance check cannot see it: the
    // document must still say that every operation with a path parameter may answer 414, and none other.
    const { paths } = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const operations = Object.entries(paths as Record<string, Record<string, { responses: object }>>).flatMap(
      ([path, methods]) =>
        Object.values(methods).map((operation) => ({ path, statuses: operation.responses })),
    );
    for (const { path, statuses } of operations)
      assert.equal('414' in statuses, path.includes('{'), `414 on ${path}`);
    assert.ok(operations.some(({ path }) => path === '/messenger/user/{snowflake}/profile'));
  });

  it('one owner’s record never answers another’s: the same interaction from two owners is two logs', async (t) => {
    const { post, app, config, count } = await setup(t, backend);
    const token = newToken();
    const otherBot = await issueToken(app, config, { owner: 42n, grants: ['messenger:log'] });
    const first = await post(logText({ token, username: 'first', options: '{"n":1}' }));
    assert.equal(first.statusCode, 200);
    const theirs = await post(logText({ token, username: 'second', options: '{"n":2}' }), otherBot);
    assert.equal(theirs.statusCode, 200, theirs.body);
    assert.equal(json(theirs).user.username, 'second', 'its own record, not the first owner’s');
    assert.deepEqual(json(theirs).interaction.options, { n: 2 });
    assert.equal(await count('interaction_logs'), 2);
    const again = await post(logText({ token, username: 'third', options: '{"n":3}' }), otherBot);
    assert.equal(json(again).user.username, 'second', 'a repeat from the same owner is its first record');
    assert.equal(await count('interaction_logs'), 2);
  });

  it('answers a corrupt stored log with a 500 that reveals nothing, logged at error', async (t) => {
    const { post, list, app, logs } = await setup(t, backend);
    assert.equal((await post(logText())).statusCode, 200);
    await sql`update interaction_logs set document = ${'{"interaction":{"user_id":1,'}`.execute(app.db);
    const reply = await list(`user_id=${USER}`);
    assert.equal(reply.statusCode, 500, reply.body);
    assert.equal(problems(reply)[0]?.name, 'INTERNAL_ERROR');
    assert.doesNotMatch(reply.body, /JSON|interaction_logs|position/);
    assert.ok(logs.lines.some((line) => line.level === 'error'));
  });

  it('stores an oversized or deeply nested body nowhere: 413 and 400 before any write', async (t) => {
    const { post, count, app } = await setup(t, backend);
    const big = await post(logText({ options: `{"text":"${'x'.repeat(70_000)}"}` }));
    assert.equal(big.statusCode, 413, big.body);
    const deep = await post(logText({ options: `${'{"a":'.repeat(100)}1${'}'.repeat(100)}` }));
    assert.equal(deep.statusCode, 400, deep.body);
    assert.equal(problems(deep)[0]?.name, 'BODY_TOO_DEEP');
    assert.equal(await count('interaction_logs'), 0);
    assert.doesNotMatch(await everyRow(app.db, backend), /xxxxxxxx/);
  });
});
