import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { sql } from 'kysely';
import { describeEachBackend } from '../../helpers/backends.js';
import { buildTestApp } from '../../helpers/build-test-app.js';
import { type FakeUpstream, FIXTURE_PLAYERS, startFakeUpstream } from '../../helpers/fake-upstream.js';
import { problems } from '../../helpers/replies.js';
import { bearer, issueToken } from '../../helpers/tokens.js';
import { failInserts } from '../interactions/interaction-logs.js';
import { expectedDays, type SentSample, setupPing } from './ping-app.js';

const PLAYER = FIXTURE_PLAYERS.minikloon.uuid;
const MINUTE = 60_000;
const DAY = 86_400_000;

describeEachBackend('ping ingestion, hostile input and faults', (backend) => {
  let fake: FakeUpstream;
  before(async () => {
    fake = await startFakeUpstream();
  });
  after(() => fake.close());

  it('refuses a batch with one bad sample, naming it, and stores none of it', async (t) => {
    const { post, postRaw, count, days } = await setupPing(t, fake, backend);
    const good = { ping: 40, lobby: 'main', at: Date.now() - MINUTE };
    const cases: [string, unknown[], string][] = [
      ['a negative ping', [good, { ...good, ping: -1 }], 'body/samples/1/ping'],
      ['a ping over a minute', [good, { ...good, ping: 60_001 }], 'body/samples/1/ping'],
      ['a fractional ping', [{ ...good, ping: 1.5 }], 'body/samples/0/ping'],
      ['a ping as text', [{ ...good, ping: '40' }], 'body/samples/0/ping'],
      ['an empty lobby', [good, good, { ...good, lobby: '' }], 'body/samples/2/lobby'],
      ['a blank lobby', [{ ...good, lobby: ' \u200b ' }], 'body/samples/0/lobby'],
      ['a Hangul filler lobby', [{ ...good, lobby: '\u3164' }], 'body/samples/0/lobby'],
      ['a blank braille lobby', [{ ...good, lobby: '\u2800\u2800' }], 'body/samples/0/lobby'],
      ['a soft hyphen lobby', [{ ...good, lobby: '\u00ad\u034f\u061c' }], 'body/samples/0/lobby'],
      ['a lobby of 65', [{ ...good, lobby: 'l'.repeat(65) }], 'body/samples/0/lobby'],
      // 22 characters sent, 66 once composed (U+FB2C is three characters in NFC).
      [
        'a lobby of 65 once composed',
        [good, { ...good, lobby: '\ufb2c'.repeat(22) }],
        'body/samples/1/lobby',
      ],
      ['a control character', [{ ...good, lobby: 'a\u0000b' }], 'body/samples/0/lobby'],
      ['6 minutes ahead', [good, { ...good, at: Date.now() + 6 * MINUTE }], 'body/samples/1/at'],
      ['beyond the retention', [{ ...good, at: Date.now() - 91 * DAY }], 'body/samples/0/at'],
      ['a day that does not exist', [{ ...good, at: '2026-02-30T00:00:00Z' }], 'body/samples/0/at'],
      ['a time without a zone', [{ ...good, at: '2026-11-22T03:05:17' }], 'body/samples/0/at'],
      ['no lobby', [{ ping: 1 }], 'body/samples/0/lobby'],
      ['an unknown field', [{ ...good, server: 'x' }], 'body/samples/0/server'],
      ['no samples', [], 'body/samples'],
      ['1001 samples', Array.from({ length: 1001 }, () => good), 'body/samples'],
    ];
    for (const [what, samples, field] of cases) {
      const reply = await post(PLAYER, samples as SentSample[]);
      assert.equal(reply.statusCode, 400, `${what}: ${reply.body}`);
      const reasons = problems(reply).map((problem) => problem.developer_reason);
      assert.ok(
        reasons.some((reason) => reason.startsWith(`${field} `)),
        `${what}: ${reasons}`,
      );
    }
    for (const payload of [
      '',
      '{}',
      '{"samples":{}}',
      '{"samples":[',
      '[]',
      '{"samples":[{"ping":1e400,"lobby":"l"}]}',
    ]) {
      const reply = await postRaw(PLAYER, payload);
      assert.equal(reply.statusCode, 400, `${payload}: ${reply.body}`);
    }
    for (const player of ['bad!name', 'a_name_far_too_long', '..%2F..%2Fetc', "x'%20or%201=1"]) {
      const reply = await post(player, [good]);
      assert.equal(reply.statusCode, 400, `${player}: ${reply.body}`);
    }
    assert.equal(await count('ping_samples'), 0);
    assert.equal(await count('ping_days'), 0);
    assert.deepEqual(await days(PLAYER), []);
  });

  it('takes lobbies of at most 64 characters once composed (NFC), whatever they were sent as', async (t) => {
    const { post, days } = await setupPing(t, fake, backend);
    const at = Date.now() - MINUTE;
    const composed = await post(PLAYER, [
      // 64 sent, 32 composed.
      { ping: 1, lobby: 'e\u0301'.repeat(32), at },
      // 64 sent, 64 composed (U+FB2C is three characters in NFC).
      { ping: 2, lobby: `${'\ufb2c'.repeat(21)}x`, at: at + 1 },
    ]);
    assert.deepEqual(composed.json(), { player: PLAYER, stored: 2, duplicates: 0 });
    const [day] = await days(PLAYER);
    assert.equal([...(day?.last_lobby ?? '')].length, 64);
    assert.equal(day?.last_lobby, `${'\ufb2c'.repeat(21)}x`.normalize('NFC'));
  });

  it('takes a full batch of 1000 samples with the longest lobbies, emoji written as escapes', async (t) => {
    const { postRaw, days } = await setupPing(t, fake, backend);
    const start = Date.now() - 2 * DAY;
    const samples = Array.from({ length: 1000 }, (_, index) => ({
      ping: index % 500,
      lobby: '🎮'.repeat(64),
      at: start + index * 1000,
    }));
    // As Python's json.dumps writes it: every emoji as two \u escapes (12 bytes for one character).
    const payload = JSON.stringify({
      samples: samples.map((sample) => ({ ...sample, at: new Date(sample.at).toISOString() })),
    }).replace(/🎮/g, '\\ud83c\\udfae');
    assert.ok(payload.length > 800_000, `${payload.length} bytes`);
    const reply = await postRaw(PLAYER, payload);
    assert.equal(reply.statusCode, 200, reply.body);
    assert.equal(reply.json().stored, 1000);
    assert.deepEqual(await days(PLAYER), expectedDays(samples, 1440));
    const tooBig = await postRaw(PLAYER, `{"samples":[${'{"ping":1,"lobby":"x"},'.repeat(50_000)}]}`);
    assert.equal(tooBig.statusCode, 413, tooBig.body);
  });

  it('needs ping:write to record and ping:read to read, before looking at the request', async (t) => {
    const { app, config } = await setupPing(t, fake, backend);
    const reader = await issueToken(app, config, { grants: ['ping:read'] });
    const writer = await issueToken(app, config, { grants: ['ping:write'] });
    const send = (method: 'GET' | 'POST', url: string, token?: string) =>
      app.inject({
        method,
        url,
        headers: { ...(token ? bearer(token) : {}), 'content-type': 'application/json' },
        ...(method === 'POST' ? { payload: '{"samples":"nonsense"}' } : {}),
      });
    assert.equal((await send('POST', `/ping/${PLAYER}`)).statusCode, 401);
    assert.equal((await send('POST', '/ping/bad!name')).statusCode, 401);
    const unread = await app.inject({
      method: 'POST',
      url: `/ping/${PLAYER}`,
      headers: { 'content-type': 'application/json' },
      payload: `{"samples":[${'0,'.repeat(200_000)}`,
    });
    assert.equal(unread.statusCode, 401, 'a malformed body from nobody is not even read');
    assert.equal((await send('POST', `/ping/${PLAYER}`, reader)).statusCode, 403);
    assert.equal((await send('GET', `/ping/${PLAYER}?limit=0`)).statusCode, 401);
    assert.equal((await send('GET', `/ping/${PLAYER}`, writer)).statusCode, 403);
    assert.equal((await send('POST', `/ping/${PLAYER}`, writer)).statusCode, 400);
  });

  it('loses nothing when many batches for one player arrive at once, on one instance or two', async (t) => {
    // One commit per batch, so that the batches' transactions interleave as much as they can.
    // A history cap above the samples sent: every sample must be in its day's history.
    const env = { GROUP_COMMIT_MAX_BATCH: '1', PING_HISTORY_PER_DAY: '5000' };
    const first = await setupPing(t, fake, backend, env);
    // A second instance on the same database (and Redis, when there is one), as a deployment runs them.
    const second = await buildTestApp(t, {
      backend,
      env,
      databaseUrl: first.databaseUrl,
      upstream: fake,
      redisKeyPrefix: first.config.redisKeyPrefix,
    });
    const secondToken = await issueToken(second.app, second.config, { grants: ['ping:write'] });
    // Two days (around yesterday's midnight, so never in the future whatever the time of day), every sample
    // at a time of its own, the batches interleaved.
    const base = Math.floor((Date.now() - DAY) / DAY) * DAY - 20 * 40 * 1000;
    const batches: SentSample[][] = Array.from({ length: 40 }, (_, batch) =>
      Array.from({ length: 40 }, (_, index) => ({
        ping: (batch * 40 + index) % 997,
        lobby: `b${batch}`,
        at: base + (index * 40 + batch) * 1000,
      })),
    );
    const replies = await Promise.all(
      batches.map((samples, index) =>
        index % 2 === 0
          ? first.post(PLAYER, samples)
          : second.app.inject({
              method: 'POST',
              url: `/ping/${PLAYER}`,
              headers: { ...bearer(secondToken), 'content-type': 'application/json' },
              payload: JSON.stringify({
                samples: samples.map((sample) => ({ ...sample, at: new Date(sample.at).toISOString() })),
              }),
            }),
      ),
    );
    for (const reply of replies) assert.equal(reply.statusCode, 200, reply.body);
    assert.equal(await first.count('ping_samples'), 40 * 40);
    const shown = await first.days(PLAYER);
    const all = batches.flat();
    const expected = expectedDays(all, 5000);
    // Every sample has a time of its own: whatever order the batches were written in, the days are exact.
    assert.deepEqual(shown, expected);
    assert.equal(shown.length, 2);
    const counted = shown.reduce((sum, day) => sum + day.history.length, 0);
    assert.equal(counted, all.length, 'every sample is in its day’s history');
  });

  it('stores a sample without a time as taken now, and a leap second on the day it was stamped', async (t) => {
    const { post, postRaw, days } = await setupPing(t, fake, backend);
    const before = Date.now();
    assert.equal((await post(PLAYER, [{ ping: 7, lobby: 'now' }])).statusCode, 200);
    const [today] = await days(PLAYER);
    assert.equal(today?.date, new Date(before).toISOString().slice(0, 10));
    const last = Date.parse(today?.last_ping ?? '');
    assert.ok(last >= before - 1 && last <= Date.now() + 1, `${today?.last_ping}`);
    const yesterday = new Date(before - DAY).toISOString().slice(0, 10);
    const leap = await postRaw(
      PLAYER,
      `{"samples":[{"ping":9,"lobby":"leap","at":"${yesterday}T23:59:60Z"}]}`,
    );
    assert.equal(leap.statusCode, 200, leap.body);
    const shown = await days(PLAYER);
    assert.equal(shown[1]?.date, yesterday);
    assert.equal(shown[1]?.last_ping, `${yesterday}T23:59:59.999Z`);
  });

  it('answers 404 for an unknown username, and 400 for a day range that ends before it starts', async (t) => {
    const { post, get, count } = await setupPing(t, fake, backend);
    const unknown = await post('NoSuchPlayer42', [{ ping: 1, lobby: 'l', at: Date.now() }]);
    assert.equal(unknown.statusCode, 404, unknown.body);
    assert.equal(problems(unknown)[0]?.name, 'PLAYER_NOT_FOUND');
    assert.equal(await count('ping_samples'), 0);
    const backwards = await get(`/ping/${PLAYER}?from=2026-11-22&to=2026-11-21`);
    assert.equal(backwards.statusCode, 400, backwards.body);
    assert.match(
      problems(backwards)[0]?.developer_reason ?? '',
      /^query\/from .* must not be after query\/to/,
    );
    assert.equal((await get(`/ping/${PLAYER}?from=2026-11-22&to=2026-11-22`)).statusCode, 200);
  });

  it('takes one player’s batches spanning thousands of days in one transaction (statements in chunks)', async (t) => {
    // A linger groups the four batches into one transaction.
    const { post, days } = await setupPing(t, fake, backend, {
      PING_RETENTION_DAYS: '3650',
      GROUP_COMMIT_LINGER_MS: '500',
    });
    // 3600 days: more than SQLite takes in one statement as placeholder rows (about 3276).
    const start = Date.now() - 3640 * DAY;
    const batches = Array.from({ length: 4 }, (_, batch) =>
      Array.from({ length: 900 }, (_, index) => ({
        ping: index,
        lobby: 'l',
        at: start + (batch * 900 + index) * DAY,
      })),
    );
    const replies = await Promise.all(batches.map((samples) => post(PLAYER, samples)));
    for (const reply of replies) assert.equal(reply.statusCode, 200, reply.body);
    assert.equal((await days(PLAYER)).length, batches.flat().length);
  });

  it('answers upstream trouble resolving a username as endpoint 5 does, storing nothing', async (t) => {
    const { post, count, get } = await setupPing(t, fake, backend, { UPSTREAM_RETRIES: '0' });
    fake.misbehave({ failWith: 503 });
    const sample = { ping: 1, lobby: 'l', at: Date.now() };
    const reply = await post('SomeoneNew', [sample]);
    assert.ok([502, 503].includes(reply.statusCode), reply.body);
    assert.match(problems(reply)[0]?.name ?? '', /^UPSTREAM_/);
    const read = await get('/ping/SomeoneNew');
    assert.ok([502, 503].includes(read.statusCode), read.body);
    fake.misbehave({ throttle: {} });
    const throttled = await post('AnotherNew', [sample]);
    assert.ok([429, 502, 503].includes(throttled.statusCode), throttled.body);
    assert.equal(await count('ping_samples'), 0);
    fake.reset();
    assert.equal((await post(PLAYER, [sample])).statusCode, 200, 'a UUID needs no upstream');
  });

  it('stores nothing of a batch whose write fails midway, and recovers', async (t) => {
    const { post, count, app, days } = await setupPing(t, fake, backend);
    await failInserts(app.db, backend, 'ping_days');
    const sample = { ping: 5, lobby: 'l', at: Date.now() - MINUTE };
    const reply = await post(PLAYER, [sample, sample]);
    assert.equal(reply.statusCode, 500, reply.body);
    assert.equal(problems(reply)[0]?.name, 'INTERNAL_ERROR');
    assert.doesNotMatch(reply.body, /ping_days|refused|trigger/);
    assert.equal(await count('ping_samples'), 0, 'the raw samples went with the failed transaction');
    await sql
      .raw(
        backend.dialect === 'sqlite' ? 'drop trigger fail_insert' : 'drop trigger fail_insert on ping_days',
      )
      .execute(app.db);
    assert.equal((await post(PLAYER, [sample])).statusCode, 200);
    assert.deepEqual(await days(PLAYER), expectedDays([sample], 1440));
  });

  it('answers a corrupt stored history with a 500 that reveals nothing, not a broken body', async (t) => {
    const { post, app, get } = await setupPing(t, fake, backend);
    assert.equal((await post(PLAYER, [{ ping: 1, lobby: 'l', at: Date.now() - MINUTE }])).statusCode, 200);
    await sql`update ping_days set history = ${'[1,2'}`.execute(app.db);
    const reply = await get(`/ping/${PLAYER}`);
    assert.equal(reply.statusCode, 500, reply.body);
    assert.equal(problems(reply)[0]?.name, 'INTERNAL_ERROR');
    assert.doesNotMatch(reply.body, /history|\[1,2/);
  });

  it('answers 503 with Retry-After while the database cannot write (a full disk), says why, and stores again after', async (t) => {
    const { post, app, count, days, logs } = await setupPing(t, fake, backend);
    const at = Date.now() - MINUTE;
    const batch = (lobby: string) => Array.from({ length: 500 }, (_, index) => ({ ping: index, lobby, at }));
    assert.equal((await post(PLAYER, batch('first'))).statusCode, 200);
    const before = await days(PLAYER);
    // SQLite: the file may not grow a page (SQLite answers SQLITE_FULL, as on a full disk, and rolls the
    // transaction back by itself); PostgreSQL: the server's own "disk full" (53100) on every new sample.
    if (backend.dialect === 'sqlite') {
      const pages = (await sql<{ page_count: number }>`pragma page_count`.execute(app.db)).rows[0]
        ?.page_count;
      await sql.raw(`pragma max_page_count = ${pages}`).execute(app.db);
    } else {
      await sql`create function disk_full() returns trigger language plpgsql as $$
        begin raise exception 'could not extend file: No space left on device' using errcode = 'disk_full'; end $$`.execute(
        app.db,
      );
      await sql`create trigger disk_full before insert on ping_samples execute function disk_full()`.execute(
        app.db,
      );
    }
    const refused = await post(PLAYER, batch('refused'));
    assert.equal(refused.statusCode, 503, refused.body);
    assert.equal(problems(refused)[0]?.name, 'DEPENDENCY_UNAVAILABLE');
    assert.ok(Number(refused.headers['retry-after']) >= 1);
    // An error for the operator, with the database's own words: no bug's "request failed" with a stack.
    const logged = logs.lines.find((line) => line.msg === 'database cannot write; answered 503');
    assert.equal(logged?.level, 'error', JSON.stringify(logged));
    assert.match(String(logged?.reason), /full|No space/, JSON.stringify(logged));
    assert.ok(!logs.lines.some((line) => line.msg === 'request failed'), 'an outage, not a bug');
    assert.deepEqual(await days(PLAYER), before, 'reads go on');

    if (backend.dialect === 'sqlite') await sql.raw('pragma max_page_count = 1073741823').execute(app.db);
    else await sql`drop trigger disk_full on ping_samples`.execute(app.db);
    const again = await post(PLAYER, batch('refused'));
    assert.deepEqual(again.json(), { player: PLAYER, stored: 500, duplicates: 0 });
    assert.equal(await count('ping_samples'), 1000, 'the refused batch was not half stored');
  });

  it('deletes raw samples older than the retention and keeps the days they made', async (t) => {
    const { post, app, count, days, logs } = await setupPing(t, fake, backend, {
      RETENTION_JOB_INTERVAL_SECONDS: '1',
      PING_RETENTION_DAYS: '30',
    });
    const recent = { ping: 20, lobby: 'recent', at: Date.now() - DAY };
    const old = { ping: 10, lobby: 'old', at: Date.now() - 29 * DAY };
    assert.equal((await post(PLAYER, [old, recent])).statusCode, 200);
    const before = await days(PLAYER);
    // The old sample ages past the retention and its day of margin: the job deletes rows by their time.
    await sql`update ping_samples set at = at - ${3 * DAY} where lobby = 'old'`.execute(app.db);
    await app.ready();
    for (let waited = 0; waited < 10_000; waited += 50) {
      if (logs.lines.some((line) => line.msg === 'periodic job ran' && line.job === 'ping-sample-retention'))
        break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const ran = logs.lines.find(
      (line) => line.msg === 'periodic job ran' && line.job === 'ping-sample-retention',
    );
    assert.equal(ran?.deleted, 1, JSON.stringify(ran));
    assert.equal(await count('ping_samples'), 1);
    assert.deepEqual(await days(PLAYER), before, 'the days keep their statistics');
  });
});
