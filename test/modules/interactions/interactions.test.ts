import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { it } from 'node:test';
import { sql } from 'kysely';
import { describeEachBackend } from '../../helpers/backends.js';
import { json, problems } from '../../helpers/replies.js';
import { issueToken } from '../../helpers/tokens.js';
import {
  everyRow,
  failInserts,
  logText,
  nested,
  newToken,
  PATH,
  SERVER,
  setup,
  USER,
} from './interaction-logs.js';

describeEachBackend('interaction logs', (backend) => {
  it('stores a log and echoes it as received: 19- and 20-digit IDs exact, as integers or strings', async (t) => {
    const { post, list, count } = await setup(t, backend);
    for (const idsAs of ['integer', 'string'] as const) {
      const token = newToken();
      const reply = await post(logText({ token, idsAs }));
      assert.equal(reply.statusCode, 200, reply.body);
      assert.match(reply.body, /"user_id":18446744073709551615,/);
      assert.match(reply.body, /"server_id":1234567890123456789[,}]/);
      const echoed = json(reply);
      assert.equal(echoed.interaction.interaction_token, token, 'the echo is the body as received');
      assert.deepEqual(echoed.interaction.options, { player: 'Notch' });
      assert.equal(echoed.user.username, 'notch');
      assert.equal(echoed.server.server_name, 'Guild');
    }
    assert.equal(await count('interaction_logs'), 2);
    const stored = await list(`user_id=${USER}`);
    assert.equal(stored.statusCode, 200, stored.body);
    assert.match(stored.body, /"user_id":18446744073709551615,/);
    assert.match(stored.body, /"owner":987654321098765432,/, 'with the logging token’s owner');
    assert.doesNotMatch(stored.body, /interaction_token|SECRET/, 'never with the token');
    const [latest] = json(stored).data;
    assert.equal(latest.interaction.interaction_name, 'stats');
    assert.ok(Math.abs(Date.parse(latest.received_at) - Date.now()) < 60_000, 'its receive time');
  });

  it('logs direct messages (no server), and records the user and server a log mentions', async (t) => {
    const { post, app } = await setup(t, backend);
    assert.equal((await post(logText({ server: null }))).statusCode, 200);
    // Later than the first log, whatever the clock's grain.
    await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal((await post(logText({ username: 'notch_renamed' }))).statusCode, 200);
    const received = (
      await sql<{ at: number }>`select received_at as at from interaction_logs order by received_at`.execute(
        app.db,
      )
    ).rows.map((row) => Number(row.at));
    const users = await sql<{
      user_id: string;
      username: string;
      first_seen_at: number;
      last_seen_at: number;
    }>`
      select user_id, username, first_seen_at, last_seen_at from interaction_users`.execute(app.db);
    assert.equal(users.rows.length, 1);
    const [user] = users.rows;
    assert.equal(user?.user_id, USER);
    assert.equal(user?.username, 'notch_renamed', 'the username last seen');
    assert.deepEqual(
      [Number(user?.first_seen_at), Number(user?.last_seen_at)],
      received,
      'first and last seen',
    );
    const servers = await sql<{ server_id: string; server_name: string }>`
      select server_id, server_name from interaction_servers`.execute(app.db);
    assert.deepEqual(servers.rows, [{ server_id: SERVER, server_name: 'Guild' }]);
  });

  it('keeps the latest names when one batch mentions a user and a server more than once', async (t) => {
    // A linger makes the three logs one batch, in the order they arrive.
    const { post, app } = await setup(t, backend, { GROUP_COMMIT_LINGER_MS: '1000' });
    const replies: Promise<{ statusCode: number }>[] = [];
    for (const name of ['early', 'middle', 'late']) {
      replies.push(post(logText({ username: `${name}_user` }).replace('"Guild"', `"${name} guild"`)));
      // Enough for each to be queued before the next is sent (150 ms was not, once, on a machine at load
      // 10), well inside the linger.
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    for (const reply of await Promise.all(replies)) assert.equal(reply.statusCode, 200);
    const { rows: users } = await sql<{ username: string }>`select username from interaction_users`.execute(
      app.db,
    );
    assert.deepEqual(users, [{ username: 'late_user' }]);
    const { rows: servers } = await sql<{
      server_name: string;
    }>`select server_name from interaction_servers`.execute(app.db);
    assert.deepEqual(servers, [{ server_name: 'late guild' }]);
  });

  it('answers a repeat of an interaction with its first record and stores nothing new, even concurrently', async (t) => {
    const { post, count, app } = await setup(t, backend);
    const token = newToken();
    const first = await post(logText({ token, username: 'first', options: '{"n":1}' }));
    assert.equal(first.statusCode, 200);
    const again = await post(logText({ token, username: 'second', options: '{"n":2}' }));
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(json(again).user.username, 'first', 'the first record');
    assert.deepEqual(json(again).interaction.options, { n: 1 });
    assert.equal(json(again).interaction.interaction_token, token);
    assert.equal(await count('interaction_logs'), 1);
    const { rows } = await sql<{ username: string }>`select username from interaction_users`.execute(app.db);
    assert.deepEqual(rows, [{ username: 'first' }], 'a repeat does not touch the users either');

    const burst = newToken();
    const replies = await Promise.all(
      Array.from({ length: 12 }, (_, index) => post(logText({ token: burst, options: `{"n":${index}}` }))),
    );
    assert.ok(replies.every((reply) => reply.statusCode === 200));
    assert.equal(new Set(replies.map((reply) => JSON.stringify(json(reply).interaction.options))).size, 1);
    assert.equal(await count('interaction_logs'), 2);
  });

  it('never keeps the token: in no row, no database file (WAL included), no log line at trace', async (t) => {
    const { post, app, logs, databaseUrl, config } = await setup(t, backend, { LOG_LEVEL: 'trace' });
    const secret = `TOPSECRET${Date.now()}`;
    assert.equal((await post(logText({ token: secret }))).statusCode, 200);
    assert.equal((await post(logText({ token: secret }))).statusCode, 200, 'a repeat');
    // 400s about the token itself: too long, with a space, not a string.
    for (const bad of [`${secret}${'x'.repeat(1100)}`, `${secret} with space`]) {
      const reply = await post(logText({ token: bad }));
      assert.equal(reply.statusCode, 400, reply.body);
      assert.equal(
        problems(reply)[0]?.developer_reason.startsWith('body/interaction/interaction_token '),
        true,
      );
      assert.doesNotMatch(reply.body, new RegExp(secret), 'the 400 does not repeat it');
    }
    const truncated = await post(logText({ token: secret }).slice(0, 120));
    assert.equal(truncated.statusCode, 400);
    assert.doesNotMatch(truncated.body, new RegExp(secret));
    const mismatched = await post(
      logText({ token: secret, user: '123456789012345678' }).replace(
        `"user":{"user_id":123456789012345678`,
        `"user":{"user_id":223456789012345678`,
      ),
    );
    assert.equal(mismatched.statusCode, 400);
    assert.doesNotMatch(mismatched.body, new RegExp(secret));

    assert.ok(logs.raw.length > 0);
    assert.equal(config.logLevel, 'trace', 'everything the service logs is written');
    for (const line of logs.raw) assert.doesNotMatch(line, new RegExp(secret), line);
    assert.doesNotMatch(await everyRow(app.db, backend), new RegExp(secret));
    if (backend.dialect === 'sqlite') {
      const file = (databaseUrl as string).slice('sqlite:'.length);
      const names = await readdir(dirname(file));
      assert.ok(
        names.some((name) => name.endsWith('-wal')),
        'the WAL is among the files read',
      );
      for (const name of names) {
        const bytes = await readFile(`${dirname(file)}/${name}`);
        assert.equal(bytes.includes(secret), false, `${name} holds the token`);
      }
    }
  });

  it('refuses bad bodies with 400 naming each faulty field', async (t) => {
    const { post, count } = await setup(t, backend);
    // IDs as strings: JSON.parse would round integers beyond 2^53.
    const valid: Body = JSON.parse(logText({ idsAs: 'string' }));
    type Part = Record<string, unknown>;
    type Body = { interaction: Part; user: Part; server: Part };
    const cases: [string, (body: Body) => unknown, string][] = [
      ['no interaction', ({ interaction: _, ...rest }) => rest, 'body/interaction'],
      ['no user', ({ user: _, ...rest }) => rest, 'body/user'],
      [
        'no token',
        (b) => ({ ...b, interaction: { ...b.interaction, interaction_token: undefined } }),
        'body/interaction/interaction_token',
      ],
      ['a user_id of letters', (b) => ({ ...b, user: { ...b.user, user_id: 'abc' } }), 'body/user/user_id'],
      ['a negative user_id', (b) => ({ ...b, user: { ...b.user, user_id: -1 } }), 'body/user/user_id'],
      ['a fractional user_id', (b) => ({ ...b, user: { ...b.user, user_id: 1.5 } }), 'body/user/user_id'],
      [
        'a server_id beyond 2^64-1',
        (b) => ({ ...b, server: { ...b.server, server_id: '18446744073709551616' } }),
        'body/server/server_id',
      ],
      ['an empty username', (b) => ({ ...b, user: { ...b.user, username: '' } }), 'body/user/username'],
      [
        'a username of 65',
        (b) => ({ ...b, user: { ...b.user, username: 'u'.repeat(65) } }),
        'body/user/username',
      ],
      [
        'a NUL in the name',
        (b) => ({ ...b, interaction: { ...b.interaction, interaction_name: 'a\u0000' } }),
        'body/interaction/interaction_name',
      ],
      [
        'options that are a list',
        (b) => ({ ...b, interaction: { ...b.interaction, options: [1] } }),
        'body/interaction/options',
      ],
      [
        'options of 5 KB',
        (b) => ({ ...b, interaction: { ...b.interaction, options: { text: 'x'.repeat(5000) } } }),
        'body/interaction/options',
      ],
      [
        'options nested 9 deep',
        (b) => ({ ...b, interaction: { ...b.interaction, options: nested(9) } }),
        'body/interaction/options',
      ],
      [
        'an unknown field',
        (b) => ({ ...b, interaction: { ...b.interaction, channel: 1 } }),
        'body/interaction/channel',
      ],
      ['user IDs that differ', (b) => ({ ...b, user: { ...b.user, user_id: 42 } }), 'body/user/user_id'],
      [
        'server IDs that differ',
        (b) => ({ ...b, server: { ...b.server, server_id: 43 } }),
        'body/server/server_id',
      ],
    ];
    for (const [what, change, field] of cases) {
      const reply = await post(JSON.stringify(change(structuredClone(valid))));
      assert.equal(reply.statusCode, 400, `${what}: ${reply.body}`);
      const reasons = problems(reply).map((problem) => problem.developer_reason);
      assert.ok(
        reasons.some((reason) => reason.startsWith(`${field} `)),
        `${what}: ${reasons}`,
      );
    }
    assert.equal(
      (await post(JSON.stringify({ ...valid, interaction: { ...valid.interaction, options: nested(8) } })))
        .statusCode,
      200,
      'nested 8 deep is fine',
    );
    assert.equal((await post('')).statusCode, 400, 'no body');
    assert.equal(await count('interaction_logs'), 1);
  });

  it('needs messenger:log to log and messenger:read to read', async (t) => {
    const { post, list, app, config, bot, reader } = await setup(t, backend);
    const anonymous = await app.inject({
      method: 'POST',
      url: PATH,
      headers: { 'content-type': 'application/json' },
      payload: logText(),
    });
    assert.equal(anonymous.statusCode, 401);
    assert.equal((await post(logText(), reader)).statusCode, 403);
    assert.equal((await list('', bot)).statusCode, 403);
    const other = await issueToken(app, config, { grants: ['player:read'] });
    assert.equal((await list('', other)).statusCode, 403);
  });

  it('lists newest first, page by page without gaps or repeats, filtered by user, server and time', async (t) => {
    const { post, list } = await setup(t, backend);
    const posted: string[] = [];
    for (let index = 0; index < 13; index++) {
      const user = index % 2 === 0 ? USER : '223456789012345678';
      const server = index % 3 === 0 ? null : SERVER;
      const reply = await post(logText({ user, server }));
      assert.equal(reply.statusCode, 200);
      posted.push(json(reply).interaction.options.player);
    }
    const walk = async (query: string) => {
      const seen: { id: string; received_at: string; user: { user_id: number } }[] = [];
      let cursor: string | null = null;
      do {
        const reply = await list(`limit=3${query}${cursor ? `&cursor=${cursor}` : ''}`);
        assert.equal(reply.statusCode, 200, reply.body);
        seen.push(...json(reply).data);
        cursor = json(reply).next_cursor;
      } while (cursor);
      return seen;
    };
    const all = await walk('');
    assert.equal(all.length, 13);
    assert.equal(new Set(all.map((log) => log.id)).size, 13, 'no repeats');
    const times = all.map((log) => Date.parse(log.received_at));
    assert.deepEqual(
      times,
      [...times].sort((a, b) => b - a),
      'newest first',
    );
    assert.equal((await walk(`&user_id=${USER}`)).length, 7);
    assert.equal((await walk(`&server_id=${SERVER}`)).length, 8);
    assert.equal((await walk(`&since=${new Date(Date.now() + 60_000).toISOString()}`)).length, 0);
    assert.equal((await walk(`&since=${new Date(Date.now() - 60_000).toISOString()}`)).length, 13);
    // At or after: the oldest log's own time takes it in, a millisecond later leaves it out.
    const oldest = Math.min(...times);
    const atOrAfter = (at: number) => times.filter((time) => time >= at).length;
    assert.equal((await walk(`&since=${new Date(oldest).toISOString()}`)).length, atOrAfter(oldest));
    assert.equal((await walk(`&since=${new Date(oldest + 1).toISOString()}`)).length, atOrAfter(oldest + 1));
    assert.equal(atOrAfter(oldest), 13);
    for (const query of ['limit=0', 'user_id=abc', 'since=yesterday', 'cursor=nope', 'token=1']) {
      assert.equal((await list(query)).statusCode, 400, query);
    }
  });

  it('fails every log of a batch whose commit fails, stores none of them, and recovers', async (t) => {
    const { post, app, count } = await setup(t, backend);
    await failInserts(app.db, backend, 'interaction_servers');
    const failed = await Promise.all(Array.from({ length: 5 }, () => post(logText())));
    for (const reply of failed) {
      assert.equal(reply.statusCode, 500, reply.body);
      assert.equal(problems(reply)[0]?.name, 'INTERNAL_ERROR');
    }
    assert.equal(await count('interaction_logs'), 0, 'nothing of a failed batch is stored');
    await sql
      .raw(
        backend.dialect === 'sqlite'
          ? 'drop trigger fail_insert'
          : 'drop trigger fail_insert on interaction_servers',
      )
      .execute(app.db);
    assert.equal((await post(logText())).statusCode, 200);
    assert.equal(await count('interaction_logs'), 1);
  });
  it('starts its retention job once the app is ready (after the migrations)', async (t) => {
    // The first attempt comes after a period shorter than a minute.
    const { app, logs } = await setup(t, backend, { RETENTION_JOB_INTERVAL_SECONDS: '1' });
    await app.ready();
    const holders = async () =>
      (await sql<{ name: string }>`select name from leases`.execute(app.db)).rows.map((row) => row.name);
    const started = async () => (await holders()).includes('interaction-log-retention');
    for (let waited = 0; !(await started()) && waited < 5000; waited += 20)
      await new Promise((resolve) => setTimeout(resolve, 20));
    assert.ok(await started(), `leases: ${await holders()}`);
    assert.ok(!logs.lines.some((line) => line.msg === 'periodic job failed'));
  });

  it('answers 503 WRITE_QUEUE_FULL with Retry-After beyond the write queue, and commits what it took', async (t) => {
    // Each batch lingers a second for company, so the queue holds what arrives meanwhile.
    const { post, count } = await setup(t, backend, {
      GROUP_COMMIT_MAX_QUEUE: '3',
      GROUP_COMMIT_LINGER_MS: '1000',
    });
    const replies = await Promise.all(Array.from({ length: 5 }, () => post(logText())));
    const statuses = replies.map((reply) => reply.statusCode).sort();
    assert.deepEqual(statuses, [200, 200, 200, 503, 503]);
    for (const reply of replies.filter((reply) => reply.statusCode === 503)) {
      assert.equal(reply.headers['retry-after'], '1');
      assert.equal(problems(reply)[0]?.name, 'WRITE_QUEUE_FULL');
      assert.doesNotMatch(reply.body, /SECRET/);
    }
    assert.equal(await count('interaction_logs'), 3, 'every log answered 200 is stored');
  });
});
