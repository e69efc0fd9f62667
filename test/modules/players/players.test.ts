import assert from 'node:assert/strict';
import { after, before, it, type TestContext } from 'node:test';
import { brotliDecompressSync } from 'node:zlib';
import { sql } from 'kysely';
import { createPlayersRepository } from '../../../src/modules/players/players.repository.js';
import { executorOf } from '../../../src/platform/db/transactions.js';
import { describeEachBackend } from '../../helpers/backends.js';
import { buildTestApp } from '../../helpers/build-test-app.js';
import { type FakeUpstream, FIXTURE_PLAYERS, startFakeUpstream } from '../../helpers/fake-upstream.js';
import { buildPlayerTestApp } from '../../helpers/player-app.js';
import { fixtureJson } from '../../helpers/player-fixtures.js';
import { bearer, issueToken } from '../../helpers/tokens.js';
import { failInserts } from '../interactions/interaction-logs.js';

const { minikloon, builder } = FIXTURE_PLAYERS;
const NEVER_JOINED = '00000000000000000000000000000000';

const problemName = (reply: { json(): { extra?: { name: string }[] } }) => reply.json().extra?.[0]?.name;

describeEachBackend(
  'GET /player/{player}',
  (backend) => {
    let fake: FakeUpstream;
    before(async () => {
      fake = await startFakeUpstream();
    });
    after(() => fake.close());
    const setup = (t: TestContext, env: Record<string, string> = {}) =>
      buildPlayerTestApp(t, fake, { backend, env });

    it('serves a player by UUID (dashed, any case) as the upstream sent it, then from the cache', async (t) => {
      const { get } = await setup(t);
      const first = await get('/player/20934EF9-488C-4651-80A7-8F861586B4CF');
      assert.equal(first.statusCode, 200, first.body);
      assert.equal(first.headers['x-cache'], 'MISS');
      assert.equal(first.headers.age, '0');
      assert.match(String(first.headers['cache-control']), /^private, max-age=(59|60)$/);
      const body = first.json();
      assert.equal(body.success, true);
      assert.equal(body.throttle, false);
      assert.deepEqual(body.player, fixtureJson('player.json').player);

      const second = await get(`/player/${minikloon.uuid}`);
      assert.equal(second.headers['x-cache'], 'HIT');
      assert.equal(second.body, first.body);
      assert.equal(fake.callsTo('/v2/player').length, 1, 'a cache hit makes no upstream call');
    });

    it('sends the player byte for byte as the upstream sent it, whatever fields it has, in their order', async (t) => {
      const { app, token, get } = await setup(t);
      // In JSON.stringify's spelling (the service keeps the upstream's JSON so: upstream-json.ts). The fields the
      // document types come in another order than its own, beside fields it does not name (nested in typed
      // objects too), an untyped field holding what Hypixel has put there (an array in achievementsOneTime), and
      // enough bytes to be sent compressed: what a serializer working from the schema would reorder or drop.
      const player = JSON.stringify({
        stats: {
          NewGame: { x: 1 },
          Bedwars: { zz_unnamed: [1, { a: null }], wins_bedwars: 12, Experience: 3456.5, coins: 7 },
        },
        unnamed: { deep: [true, '§6gold', -0.5e-7], padding: 'x'.repeat(2048) },
        displayname: 'Minikloon',
        achievementsOneTime: ['general_first_join', []],
        socialMedia: {
          TWITTER: 'old layout',
          links: { MIXER: 'm', DISCORD: 'Minikloon#0001' },
          prompt: true,
        },
        networkExp: 160452580.5,
        uuid: minikloon.uuid,
        _id: '5cd536a538200698db7973c8',
      });
      fake.setPlayer(minikloon.uuid, player);
      const expected = `{"success":true,"throttle":false,"player":${player}}`;
      const url = `/player/${minikloon.uuid}`;
      const miss = await get(url);
      assert.equal(miss.headers['x-cache'], 'MISS');
      assert.equal(miss.body, expected, 'fetched: the bytes as sent');
      const hit = await get(url);
      assert.equal(hit.headers['x-cache'], 'HIT');
      assert.equal(hit.body, expected, 'cached: the bytes as sent');
      const compressed = await app.inject({
        method: 'GET',
        url,
        headers: { ...bearer(token), 'accept-encoding': 'br' },
      });
      assert.equal(compressed.headers['content-encoding'], 'br');
      assert.equal(
        brotliDecompressSync(compressed.rawPayload).toString('utf8'),
        expected,
        'compressed alike',
      );
      const bulk = await app.inject({
        method: 'POST',
        url: '/players',
        headers: bearer(token),
        payload: { players: [minikloon.uuid] },
      });
      assert.equal(bulk.body, `{"results":{"${minikloon.uuid}":${expected}}}`, 'a bulk item alike');

      // The captured reply of a large player: hundreds of fields the document does not name, in Hypixel's order.
      const large = await get(`/player/${builder.uuid}`);
      assert.equal(
        large.body,
        `{"success":true,"throttle":false,"player":${JSON.stringify(fixtureJson('player-large.json').player)}}`,
      );
    });

    it('resolves a username through Mojang once, and remembers it', async (t) => {
      const { get } = await setup(t);
      const byName = await get('/player/minikloon');
      assert.equal(byName.statusCode, 200);
      assert.equal(byName.json().player.uuid, minikloon.uuid);
      assert.equal((await get('/player/MINIKLOON')).headers['x-cache'], 'HIT');
      assert.equal(fake.callsTo('/users/profiles/minecraft/').length, 1);
      assert.equal(fake.callsTo('/v2/player').length, 1);
    });

    it('answers 404 in the result shape for an unknown username and for a player who never joined', async (t) => {
      const { get } = await setup(t);
      for (const url of ['/player/nobody_here', `/player/${NEVER_JOINED}`]) {
        const reply = await get(url);
        assert.equal(reply.statusCode, 404, url);
        const body = reply.json();
        assert.deepEqual(Object.keys(body).sort(), ['cause', 'player', 'success', 'throttle']);
        assert.equal(body.success, false);
        assert.equal(body.throttle, false);
        assert.equal(body.player, null);
      }
      // Not-found answers are cached too.
      assert.equal((await get(`/player/${NEVER_JOINED}`)).headers['x-cache'], 'HIT');
    });

    it('answers a bad {player} with a 400 ErrorResponse', async (t) => {
      const { get } = await setup(t);
      for (const player of [
        'bad!name',
        'a_name_far_too_long',
        `${minikloon.uuid}0`,
        '20934ef9-488c-4651-80a78f861586b4cf',
      ]) {
        const reply = await get(`/player/${encodeURIComponent(player)}`);
        assert.equal(reply.statusCode, 400, player);
        const body = reply.json();
        assert.equal(body.code, 400);
        assert.equal(body.extra[0].name, 'INVALID_FIELD');
        assert.match(body.extra[0].reason, /^player must be a Minecraft UUID/);
      }
      assert.equal(fake.calls.length, 0);
    });

    it('needs a token with player:read', async (t) => {
      const { app, config, get } = await setup(t);
      const missing = await app.inject({ method: 'GET', url: `/player/${minikloon.uuid}` });
      assert.equal(missing.statusCode, 401);
      assert.equal(problemName(missing), 'TOKEN_MISSING');
      const otherGrant = await issueToken(app, config, { grants: ['profiles:read'] });
      const forbidden = await get(`/player/${minikloon.uuid}`, otherGrant);
      assert.equal(forbidden.statusCode, 403);
      assert.equal(problemName(forbidden), 'GRANT_MISSING');
      assert.equal(fake.calls.length, 0, 'no upstream call for a refused request');
    });

    it('serves a GET that carries Content-Type: application/json and {}', async (t) => {
      const { app, token } = await setup(t);
      const reply = await app.inject({
        method: 'GET',
        url: `/player/${minikloon.uuid}`,
        headers: { ...bearer(token), 'content-type': 'application/json' },
        payload: '{}',
      });
      assert.equal(reply.statusCode, 200);
    });

    it('makes exactly one upstream call for 200 concurrent requests for one cold player', async (t) => {
      const { app, get } = await setup(t);
      fake.misbehave({ delayMs: 50 });
      const replies = await Promise.all(Array.from({ length: 200 }, () => get(`/player/${minikloon.uuid}`)));
      assert.ok(replies.every((reply) => reply.statusCode === 200));
      assert.equal(fake.callsTo('/v2/player').length, 1);
      const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body;
      assert.match(metrics, /single_flight_joins_total\{resource="player"\} 199/);
      assert.match(metrics, /upstream_requests_total\{upstream="hypixel",endpoint="player",outcome="ok"\} 1/);
    });

    it('records the player, the names seen, the latest copy and whose lookup fetched it on each fetch', async (t) => {
      // Each lookup waits for its call (a call slowed past the default 1 s stale deadline would still be on its way).
      const { app, config, get } = await setup(t, {
        CACHE_PLAYER_FRESH_SECONDS: '0',
        CACHE_STALE_DEADLINE_MS: '60000',
      });
      await get(`/player/${minikloon.uuid}`);
      const other = await issueToken(app, config, { owner: 18446744073709551615n });
      await get(`/player/${minikloon.uuid}`, other);
      const { rows } = await sql<{ by: string; copy_by: string }>`
        select players.last_fetched_by as by, player_snapshots.fetched_by as copy_by
        from players join player_snapshots using (uuid) where uuid = ${minikloon.uuid}`.execute(app.db);
      assert.deepEqual(rows, [{ by: '18446744073709551615', copy_by: '18446744073709551615' }]);
      const [record] = (
        await sql<{
          name: string | null;
          fetch_count: number;
          first_fetched_at: number;
          last_fetched_at: number;
        }>`
          select name, fetch_count, first_fetched_at, last_fetched_at from players
          where uuid = ${minikloon.uuid}`.execute(app.db)
      ).rows;
      assert.ok(record);
      assert.equal(record.name, 'Minikloon');
      assert.equal(Number(record.fetch_count), 2);
      assert.ok(Number(record.first_fetched_at) <= Number(record.last_fetched_at));
      const names = await sql<{ name: string }>`
        select name from player_names where uuid = ${minikloon.uuid} order by first_seen_at`.execute(app.db);
      assert.deepEqual(
        names.rows.map((entry) => entry.name),
        ['Minikloon'],
      );
      const repository = createPlayersRepository(executorOf(app.db));
      const copy = await repository.lastKnown(minikloon.uuid);
      assert.deepEqual(JSON.parse(copy?.json ?? 'null'), fixtureJson('player.json').player);
    });

    it('serves a fetched player even when recording it fails, and says so in the log', async (t) => {
      const { app, get, logs } = await setup(t);
      await failInserts(app.db, backend, 'players');
      const reply = await get(`/player/${minikloon.uuid}`);
      assert.equal(reply.statusCode, 200, reply.body);
      assert.equal(reply.json().player.uuid, minikloon.uuid);
      const logged = logs.lines.find((line) => line.msg === 'could not record a player fetch');
      assert.equal(logged?.level, 'error', JSON.stringify(logged));
      assert.equal(logged?.uuid, minikloon.uuid);
      const { rows } = await sql`select uuid from players`.execute(app.db);
      assert.deepEqual(rows, [], 'nothing recorded');
    });

    it('answers 429 throttle:true with Retry-After when the upstream throttles and nothing is cached', async (t) => {
      const { get } = await setup(t);
      fake.misbehave({ throttle: { global: true } });
      const reply = await get(`/player/${minikloon.uuid}`);
      assert.equal(reply.statusCode, 429);
      assert.deepEqual(reply.json(), {
        success: false,
        cause: 'the Hypixel API is throttling requests',
        throttle: true,
        player: null,
      });
      assert.ok(Number(reply.headers['retry-after']) >= 1);
      assert.equal(reply.headers['cache-control'], 'no-store');
      assert.equal(fake.callsTo('/v2/player').length, 1, 'a 429 is never retried');
    });

    it('serves the stale copy when the upstream is down, slow or answers garbage; without one 502/504', async (t) => {
      // Many failures in a row here: keep the circuit breaker (tested on its own below) out of the way.
      // The timeout is wide of a loaded machine's answer time, and the slow case far beyond it.
      const { get } = await setup(t, {
        CACHE_PLAYER_FRESH_SECONDS: '0',
        UPSTREAM_TIMEOUT_MS: '1500',
        UPSTREAM_RETRIES: '1',
        UPSTREAM_BREAKER_FAILURES: '1000',
      });
      assert.equal((await get(`/player/${minikloon.uuid}`)).headers['x-cache'], 'MISS');
      const cases: [string, Parameters<FakeUpstream['misbehave']>[0], number][] = [
        ['down', { failWith: 503 }, 502],
        ['slow', { delayMs: 60_000 }, 504],
        ['garbage', { garbage: true }, 502],
      ];
      for (const [what, how, status] of cases) {
        fake.reset();
        fake.misbehave(how);
        const stale = await get(`/player/${minikloon.uuid}`);
        assert.equal(stale.statusCode, 200, what);
        assert.equal(stale.headers['x-cache'], 'STALE', what);
        assert.equal(stale.json().player.uuid, minikloon.uuid, what);
        assert.match(String(stale.headers['cache-control']), /max-age=0/);
        const none = await get(`/player/${FIXTURE_PLAYERS.builder.uuid}`);
        assert.equal(none.statusCode, status, `${what}: ${none.body}`);
        const body = none.json();
        assert.equal(body.success, false);
        assert.equal(body.player, null);
        assert.equal(typeof body.cause, 'string');
      }
    });

    it('without HYPIXEL_API_KEY: a lookup that needs Hypixel answers 503 naming the setting, and sends nothing', async (t) => {
      fake.reset();
      // The fake upstream's address, without the key the test apps are given.
      const { app, config } = await buildTestApp(t, {
        backend,
        env: { HYPIXEL_API_URL: fake.url, MOJANG_API_URL: fake.url },
      });
      const token = await issueToken(app, config);
      for (const url of [`/player/${minikloon.uuid}`, `/gamemode/profiles/${minikloon.uuid}`]) {
        const reply = await app.inject({ method: 'GET', url, headers: bearer(token) });
        assert.equal(reply.statusCode, 503, `${url}: ${reply.body}`);
        assert.equal(reply.json().success, false);
        assert.match(reply.json().cause, /HYPIXEL_API_KEY/);
      }
      assert.equal(fake.callsTo('/v2/').length, 0, 'no call Hypixel would refuse');
    });

    it('answers 503 when the upstream cannot be reached at all', async (t) => {
      const { get } = await setup(t, {
        HYPIXEL_API_URL: 'http://127.0.0.1:1',
        UPSTREAM_RETRIES: '0',
      });
      const reply = await get(`/player/${minikloon.uuid}`);
      assert.equal(reply.statusCode, 503);
      assert.equal(reply.json().player, null);
    });

    it('serves the stored latest copy after a restart when the upstream is down', async (t) => {
      const first = await setup(t);
      await first.get(`/player/${minikloon.uuid}`);
      // A new instance on the same database starts with an empty in-process cache.
      // (With Redis: a fresh key prefix, so the shared cache is empty too.)
      const { app } = await buildTestApp(t, { backend, databaseUrl: first.databaseUrl, upstream: fake });
      fake.reset();
      fake.misbehave({ failWith: 502 });
      const reply = await app.inject({
        method: 'GET',
        url: `/player/${minikloon.uuid}`,
        headers: bearer(first.token),
      });
      assert.equal(reply.statusCode, 200, reply.body);
      assert.equal(reply.headers['x-cache'], 'STALE');
      assert.deepEqual(reply.json().player, fixtureJson('player.json').player);
    });

    it('retries a 5xx, never a 4xx', async (t) => {
      const { get } = await setup(t);
      fake.misbehave({ failNext: 1 });
      assert.equal((await get(`/player/${minikloon.uuid}`)).statusCode, 200);
      assert.equal(fake.callsTo('/v2/player').length, 2);

      const wrongKey = await setup(t, { HYPIXEL_API_KEY: 'wrong-key' });
      const reply = await wrongKey.get(`/player/${minikloon.uuid}`);
      assert.equal(reply.statusCode, 502);
      assert.equal(reply.json().cause, 'the Hypixel API refused the service key');
      assert.equal(fake.callsTo('/v2/player').length, 1);
    });

    it('stops calling a failing upstream for a while (circuit breaker)', async (t) => {
      const { get } = await setup(t, {
        UPSTREAM_RETRIES: '0',
        UPSTREAM_BREAKER_FAILURES: '2',
      });
      fake.misbehave({ failWith: 500 });
      const statuses = [];
      for (let index = 1; index <= 4; index++)
        statuses.push((await get(`/player/${String(index).repeat(32)}`)).statusCode);
      assert.deepEqual(statuses, [502, 502, 503, 503]);
      assert.equal(fake.callsTo('/v2/player').length, 2);
    });
  },
  { caches: true },
);
