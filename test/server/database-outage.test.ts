import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import pg from 'pg';
import { describeOrSkip } from '../helpers/backends.js';
import { buildTestApp, deferClose, type LogCapture } from '../helpers/build-test-app.js';
import { skipOn, skipWithoutPostgres, testDatabaseUrl } from '../helpers/environment.js';
import { FIXTURE_PLAYERS, startFakeUpstream } from '../helpers/fake-upstream.js';
import type { Reply } from '../helpers/replies.js';
import { startTcpProxy, throughProxy } from '../helpers/tcp-proxy.js';
import { createTestDatabase } from '../helpers/test-database.js';
import { addWhoamiRoute, bearer, issueToken, jtiOf, revokeFromCommandLine } from '../helpers/tokens.js';
import { logText } from '../modules/interactions/interaction-logs.js';

/** Polls `check` until it holds, every 20 ms for at most `withinMs` (a wide bound: it shows nothing hangs). */
async function eventually(check: () => Promise<boolean> | boolean, withinMs = 10_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${withinMs} ms`);
    await sleep(20);
  }
}

/** A connection of the test's own to the same database and schema, for what the test does behind the app. */
async function adminOf(t: TestContext, databaseUrl: string): Promise<pg.Client> {
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  deferClose(t, () => admin.end());
  return admin;
}

/** The service on PostgreSQL, its connections named so that the test can find (and end) them. */
async function appOnPostgres(
  t: TestContext,
  via?: (url: string) => string,
  env: Record<string, string> = {},
) {
  const database = await createTestDatabase('postgres');
  deferClose(t, () => database.drop());
  const applicationName = `pds_outage_${randomBytes(6).toString('hex')}`;
  const url = new URL(database.url);
  url.searchParams.set('application_name', applicationName);
  const databaseUrl = via ? via(url.toString()) : url.toString();
  const test = await buildTestApp(t, { dialect: 'postgres', databaseUrl, env });
  addWhoamiRoute(test.app, 'player:read');
  const token = await issueToken(test.app, test.config);
  const whoami = (presented = token) =>
    test.app.inject({ method: 'GET', url: '/test/whoami', headers: bearer(presented) });
  /** A token the instance has not seen: its record is read from the database, not kept. */
  const unseenToken = () => issueToken(test.app, test.config);
  return { ...test, applicationName, adminUrl: database.url, token, whoami, unseenToken };
}

/** The 503 ErrorResponse of a request the database could not serve. */
function assertDatabaseUnavailable(reply: {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
}) {
  assert.equal(reply.statusCode, 503, reply.body);
  assert.ok(Number(reply.headers['retry-after']) >= 1, 'with Retry-After');
  const body = JSON.parse(reply.body);
  assert.equal(body.success, false);
  assert.equal(body.code, 503);
  assert.deepEqual(
    body.extra.map((problem: { name: string }) => problem.name),
    ['DEPENDENCY_UNAVAILABLE'],
  );
  assert.doesNotMatch(reply.body, /terminat|ECONN|pg_|postgres|127\.0\.0\.1/i, 'no driver detail');
}

/** Whether the reply is a 200; anything else must be the database's 503 (never a 500, never a dropped socket). */
function servedOrUnavailable(reply: { statusCode: number; headers: Record<string, unknown>; body: string }) {
  if (reply.statusCode !== 200) assertDatabaseUnavailable(reply);
  return reply.statusCode === 200;
}

const lostConnectionLogged = (logs: LogCapture) =>
  logs.lines.some((line) => line.msg === 'database connection lost' && line.level === 'warn');

describeOrSkip('PostgreSQL connection loss', { skip: skipWithoutPostgres, concurrency: true }, () => {
  it('survives the server ending idle connections, logs it, and serves on new ones', async (t) => {
    const { app, logs, applicationName, adminUrl, whoami, unseenToken } = await appOnPostgres(t);
    assert.equal((await whoami()).statusCode, 200);
    const admin = await adminOf(t, adminUrl);
    const { rows } = await admin.query(
      'select pg_terminate_backend(pid) as ended from pg_stat_activity where application_name = $1',
      [applicationName],
    );
    assert.ok(rows.length >= 1, 'the app had a connection to end');
    await eventually(() => lostConnectionLogged(logs));
    assert.equal((await whoami(await unseenToken())).statusCode, 200, 'served on a new connection');
    assert.equal((await app.inject({ method: 'GET', url: '/ready' })).statusCode, 200);
  });

  it('answers requests in flight when their connections end with 503 ErrorResponses, then recovers', async (t) => {
    const { applicationName, adminUrl, whoami, unseenToken } = await appOnPostgres(t);
    assert.equal((await whoami()).statusCode, 200);
    const admin = await adminOf(t, adminUrl);
    const observer = await adminOf(t, adminUrl);
    // Tokens the instance has not seen: each request reads its token's record.
    const unseen = await Promise.all(Array.from({ length: 5 }, unseenToken));
    // Hold the token table, so that the requests' token lookups wait on the lock: in flight, for sure.
    await admin.query('begin');
    await admin.query('lock table tokens in access exclusive mode');
    const inFlight = unseen.map((token) => whoami(token));
    await eventually(async () => {
      const waiting = await observer.query(
        "select count(*)::int as n from pg_stat_activity where application_name = $1 and wait_event_type = 'Lock'",
        [applicationName],
      );
      return waiting.rows[0].n === 5;
    });
    await observer.query(
      'select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1',
      [applicationName],
    );
    for (const reply of await Promise.all(inFlight)) assertDatabaseUnavailable(reply);
    await admin.query('rollback');
    // A connection whose server process is ending may still be lent once more (its last words arrive
    // before its socket closes); that request is a 503 too, and the pool replaces the connection. A token it
    // has not kept yet: its record is read from the database.
    await eventually(async () => servedOrUnavailable(await whoami(unseen[0])));
  });

  it('answers 503 with Retry-After while PostgreSQL is unreachable, /ready says so, and recovers by itself', async (t) => {
    const target = new URL(String(testDatabaseUrl));
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    deferClose(t, () => proxy.close());
    const { app, logs, token, whoami, unseenToken } = await appOnPostgres(t, (url) =>
      throughProxy(url, proxy),
    );
    assert.equal((await whoami()).statusCode, 200);
    const unseen = await unseenToken();

    proxy.cut();
    await eventually(() => lostConnectionLogged(logs));
    // A token the instance has not seen needs its record from the database (one it has seen is kept: the
    // suite below).
    for (let request = 0; request < 3; request++) assertDatabaseUnavailable(await whoami(unseen));
    assertDatabaseUnavailable(await app.inject({ method: 'POST', url: '/auth/refresh', payload: { token } }));
    // An upstream-backed route too: its token check meets the outage first (an ErrorResponse 503, which
    // its document allows beside the result shape's).
    assertDatabaseUnavailable(
      await app.inject({
        method: 'GET',
        url: '/player/20934ef9488c465180a78f861586b4cf',
        headers: bearer(unseen),
      }),
    );
    const ready = await app.inject({ method: 'GET', url: '/ready' });
    assert.equal(ready.statusCode, 503);
    assert.deepEqual(
      ready.json().extra.map((problem: { reason: string }) => problem.reason),
      ['database is unavailable', 'migrations is unavailable'],
    );

    proxy.restore();
    await eventually(async () => servedOrUnavailable(await whoami(unseen)));
    assert.equal((await app.inject({ method: 'GET', url: '/ready' })).statusCode, 200);
    // An outage is expected weather: warnings, never an error with a stack for each request it failed.
    assert.deepEqual(
      logs.lines.filter((line) => line.level === 'error' || line.level === 'fatal'),
      [],
    );
    assert.ok(logs.lines.some((line) => line.msg === 'database unavailable; answered 503'));
  });

  it('answers 503 within DATABASE_QUERY_TIMEOUT_MS when PostgreSQL goes silent, and recovers by itself', async (t) => {
    const target = new URL(String(testDatabaseUrl));
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    deferClose(t, () => proxy.close());
    const boundMs = 500;
    const { app, token, whoami, unseenToken } = await appOnPostgres(t, (url) => throughProxy(url, proxy), {
      DATABASE_QUERY_TIMEOUT_MS: String(boundMs),
    });
    const unseen = await unseenToken();
    const log = () =>
      app.inject({
        method: 'POST',
        url: '/messenger/logging/interaction',
        headers: { ...bearer(token), 'content-type': 'application/json' },
        payload: logText(),
      });
    // Connections in the pool, then a server that answers nothing on them (paused, or a route dropping
    // packets): before the bound, each request waited for ever.
    assert.equal((await log()).statusCode, 200);
    proxy.freeze();
    /** The reply, and how long it took; a failure, not a hang, when it does not come within 10 s. */
    const timed = async (request: Promise<Reply>) => {
      const started = Date.now();
      const late = sleep(10_000, undefined, { ref: false }).then(() => {
        throw new Error('no answer within 10 s');
      });
      const reply = await Promise.race([request, late]);
      return { reply, tookMs: Date.now() - started };
    };
    for (const request of [() => whoami(unseen), log, () => app.inject({ method: 'GET', url: '/ready' })]) {
      const { reply, tookMs } = await timed(request());
      assert.equal(reply.statusCode, 503, reply.body);
      assert.ok(Number(reply.headers['retry-after']) >= 1, 'with Retry-After');
      assert.ok(tookMs < boundMs + 2000, `answered in ${tookMs} ms`);
    }
    proxy.restore();
    await eventually(async () => (await app.inject({ method: 'GET', url: '/ready' })).statusCode === 200);
    assert.equal((await whoami(unseen)).statusCode, 200, 'served on new connections');
    assert.equal((await log()).statusCode, 200, 'and written');
  });
});

/** An instance on a fresh PostgreSQL database that it reaches through a proxy the test can cut. */
async function appBehindProxy(t: TestContext, redis: boolean, env: Record<string, string> = {}) {
  const upstream = await startFakeUpstream();
  deferClose(t, () => upstream.close());
  const target = new URL(String(testDatabaseUrl));
  const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  deferClose(t, () => proxy.close());
  const database = await createTestDatabase('postgres');
  deferClose(t, () => database.drop());
  const test = await buildTestApp(t, {
    dialect: 'postgres',
    redis,
    upstream,
    databaseUrl: throughProxy(database.url, proxy),
    env: { CACHE_PLAYER_FRESH_SECONDS: '3600', ...env },
  });
  addWhoamiRoute(test.app, 'player:read');
  await test.app.ready();
  /** Another instance on the same database and Redis key space that still reaches the database. */
  const other = () =>
    buildTestApp(t, {
      dialect: 'postgres',
      redis,
      databaseUrl: database.url,
      redisKeyPrefix: test.config.redisKeyPrefix,
    });
  return { ...test, proxy, other };
}

/**
 * An instance cut off from the database after it has seen a token, and that token revoked by another
 * instance that still reaches the database; `whoami` asks the cut-off one with the token.
 */
async function revokedWhileCutOff(t: TestContext, redis: boolean) {
  const { app, config, logs, proxy, other } = await appBehindProxy(t, redis);
  const second = await other();
  const token = await issueToken(app, config);
  const whoami = () => app.inject({ method: 'GET', url: '/test/whoami', headers: bearer(token) });
  assert.equal((await whoami()).statusCode, 200);
  proxy.cut();
  await eventually(() => lostConnectionLogged(logs));
  // With Redis the record is trusted through the outage (shown at length above): what ends it below is
  // the revocation heard.
  if (redis) assert.equal((await whoami()).statusCode, 200, 'kept through the outage');
  assert.equal(await revokeFromCommandLine(second, jtiOf(token)), 1);
  return { whoami, proxy };
}

/** Waits until `whoami` stops answering 200; what it answers then must be the database's 503. */
async function untilNoLonger200(whoami: () => Promise<Reply>): Promise<void> {
  await eventually(async () => {
    const reply = await whoami();
    if (reply.statusCode === 200) return false;
    assertDatabaseUnavailable(reply);
    return true;
  });
}

describeOrSkip(
  'PostgreSQL unreachable, with Redis: cached reads keep answering',
  { skip: skipOn('postgres', 'redis') },
  () => {
    it('serves cached players to tokens it has seen while the database is down; writes 503; /ready says so', async (t) => {
      const { app, config, logs, proxy } = await appBehindProxy(t, true);
      const token = await issueToken(app, config);
      const unseen = await issueToken(app, config, { owner: 77n });
      const player = `/player/${FIXTURE_PLAYERS.minikloon.uuid}`;
      const read = (auth = token) => app.inject({ method: 'GET', url: player, headers: bearer(auth) });
      assert.equal((await read()).headers['x-cache'], 'MISS');
      assert.equal((await read()).headers['x-cache'], 'HIT', 'cached, and the token seen');
      const profilesUrl = `/gamemode/profiles/${FIXTURE_PLAYERS.skyblocker.uuid}`;
      const profiles = () => app.inject({ method: 'GET', url: profilesUrl, headers: bearer(token) });
      assert.equal((await profiles()).statusCode, 200);
      // A ping history kept in memory: its revision is read from the database on every read.
      const pingUrl = `/ping/${FIXTURE_PLAYERS.minikloon.uuid}`;
      const history = () => app.inject({ method: 'GET', url: pingUrl, headers: bearer(token) });
      const sample = {
        samples: [{ ping: 42, lobby: 'main', at: new Date(Date.now() - 1000).toISOString() }],
      };
      const stored = await app.inject({
        method: 'POST',
        url: pingUrl,
        headers: bearer(token),
        payload: sample,
      });
      assert.equal(stored.statusCode, 200, stored.body);
      const kept = await history();
      assert.equal(kept.statusCode, 200);

      proxy.cut();
      await eventually(() => lostConnectionLogged(logs));
      // Well past the change mark's trust window (3 s) while reads keep coming.
      const until = Date.now() + 5000;
      let served = 0;
      while (Date.now() < until) {
        const reply = await read();
        assert.equal(reply.statusCode, 200, `a cached read during the outage: ${reply.body}`);
        assert.equal(reply.headers['x-cache'], 'HIT');
        served++;
        await sleep(50);
      }
      t.diagnostic(`${served} cached reads answered 200 over 5 s of outage`);
      const cachedProfiles = await profiles();
      assert.equal(
        cachedProfiles.statusCode,
        200,
        `cached profiles during the outage: ${cachedProfiles.body}`,
      );
      assertDatabaseUnavailable(await read(unseen));
      // The kept history is not served while its revision cannot be read (a sample may have landed through
      // another instance): a 503 ErrorResponse, never a possibly stale answer, never a 500.
      assertDatabaseUnavailable(await history());
      const write = await app.inject({
        method: 'POST',
        url: '/messenger/logging/interaction',
        headers: { ...bearer(token), 'content-type': 'application/json' },
        payload: logText(),
      });
      assertDatabaseUnavailable(write);
      const ready = await app.inject({ method: 'GET', url: '/ready' });
      assert.equal(ready.statusCode, 503, '/ready says the database is down');

      proxy.restore();
      await eventually(async () => (await app.inject({ method: 'GET', url: '/ready' })).statusCode === 200);
      assert.equal((await read(unseen)).statusCode, 200, 'after the outage, any token again');
      const again = await history();
      assert.equal(again.statusCode, 200);
      assert.equal(again.headers.etag, kept.headers.etag, 'the same history, the same ETag');
    });

    it('hears through Redis a revocation another instance makes while this one cannot reach the database', async (t) => {
      const { whoami, proxy } = await revokedWhileCutOff(t, true);
      // Heard: the record is dropped, and the database that would tell what became of it cannot be read
      // (a 503, never the 200 the kept record would give).
      await untilNoLonger200(whoami);
      proxy.restore();
      await eventually(async () => (await whoami()).statusCode === 401);
    });

    it('stops answering with a kept record while its own pool is exhausted: the busy database still takes revocations', async (t) => {
      const { app, config, other } = await appBehindProxy(t, true, {
        DATABASE_POOL_SIZE: '2',
        DATABASE_POOL_CONNECT_TIMEOUT_MS: '500',
      });
      const second = await other();
      const token = await issueToken(app, config);
      const whoami = () => app.inject({ method: 'GET', url: '/test/whoami', headers: bearer(token) });
      assert.equal((await whoami()).statusCode, 200);
      // Every connection of the instance's pool held by a long statement: the database itself is up.
      const held = Promise.all([1, 2].map(() => sql`select pg_sleep(6)`.execute(app.db)));
      // Revoked where nothing publishes it (the command line without Redis): only the database knows, and
      // this instance cannot read it now. Its kept record must not go on answering for it.
      assert.equal(await revokeFromCommandLine(second, jtiOf(token), { withoutRedis: true }), 1);
      await untilNoLonger200(whoami);
      await held;
      await eventually(async () => (await whoami()).statusCode === 401);
    });
  },
);

describeOrSkip(
  'PostgreSQL unreachable, without Redis: kept token records lapse',
  { skip: skipOn('postgres') },
  () => {
    it('stops answering with a kept record once the mark is unread for its window: another instance may have revoked it', async (t) => {
      // Revoked where this instance cannot see it, by an instance that still reaches the database: nothing
      // carries it here, so the kept record must stop answering once the mark's window (3 s) has passed.
      const { whoami, proxy } = await revokedWhileCutOff(t, false);
      await untilNoLonger200(whoami);
      const until = Date.now() + 1000;
      while (Date.now() < until) assertDatabaseUnavailable(await whoami());
      proxy.restore();
      await eventually(async () => (await whoami()).statusCode === 401);
    });
  },
);
