import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, it, type TestContext } from 'node:test';
import { describeEachBackend } from '../../helpers/backends.js';
import { type FakeUpstream, FIXTURE_PLAYERS, startFakeUpstream } from '../../helpers/fake-upstream.js';
import { buildPlayerTestApp } from '../../helpers/player-app.js';
import { fixtureJson } from '../../helpers/player-fixtures.js';
import { problemName, problems, type Reply, rateLimitItem } from '../../helpers/replies.js';
import { bearer, issueToken } from '../../helpers/tokens.js';

const { minikloon, builder } = FIXTURE_PLAYERS;
const NEVER_JOINED = '00000000000000000000000000000000';
const DASHED_MINIKLOON = '20934EF9-488C-4651-80A7-8F861586B4CF';
const OTHER_OWNER = 987654321098765432n;
/** The fake key's limit per window, and one owner's share of it (25 %). */
const KEY_LIMIT = 100;
const OWNER_SHARE = 25;

/** Cold UUIDs nobody has looked up, each an upstream call. */
const coldUuids = (count: number, salt: string) =>
  Array.from({ length: count }, (_, index) => `${salt}${index.toString(16).padStart(32 - salt.length, '0')}`);

/** The bulk answer the given items make, each item's bytes as they are: `{"results":{"<key>":<body>,...}}`. */
const bulkOf = (entries: readonly (readonly [string, string])[]) =>
  `{"results":{${entries.map(([key, body]) => `${JSON.stringify(key)}:${body}`).join(',')}}}`;

type Results = Record<string, { success: boolean; throttle: boolean; cause?: string; player: unknown }>;
const resultsOf = (reply: Reply): Results => (JSON.parse(reply.body) as { results: Results }).results;

/** The `upstream` or `work` item of a RateLimit header. */
const standing = (reply: Reply, policy: string) => rateLimitItem(reply.headers.ratelimit, policy);

describeEachBackend(
  'POST /players',
  (backend) => {
    let fake: FakeUpstream;
    before(async () => {
      fake = await startFakeUpstream({ rateLimit: KEY_LIMIT });
    });
    after(() => fake.close());
    const setup = async (t: TestContext, env: Record<string, string> = {}) => {
      const test = await buildPlayerTestApp(t, fake, { backend, env });
      const post = (payload: unknown, token = test.token) =>
        test.app.inject({
          method: 'POST',
          url: '/players',
          headers: bearer(token),
          payload: payload as object,
        });
      return { ...test, post };
    };

    it('answers each player byte for byte as GET /player/{player} does, in the order given', async (t) => {
      const { get, post } = await setup(t);
      const given = [builder.uuid, 'Minikloon', NEVER_JOINED, 'nobody_here', minikloon.uuid];
      const bulk = await post({ players: given });
      assert.equal(bulk.statusCode, 200, bulk.body);
      assert.match(String(bulk.headers['content-type']), /^application\/json/);
      assert.equal(bulk.headers['cache-control'], 'no-store');
      assert.equal(bulk.headers['content-encoding'], undefined);
      const singles: Reply[] = [];
      for (const player of given) singles.push(await get(`/player/${player}`));
      assert.deepEqual(
        singles.map((single) => single.statusCode),
        [200, 200, 404, 404, 200],
      );
      assert.equal(
        bulk.body,
        bulkOf(given.map((player, index) => [player, singles[index]?.body ?? ''])),
        'each item is the single answer, byte for byte',
      );
      assert.deepEqual(Object.keys(resultsOf(bulk)), given, 'results in the order given');
      assert.deepEqual(resultsOf(bulk)[minikloon.uuid]?.player, fixtureJson('player.json').player);
      // The singles were cache hits: the bulk read fetched each player once, and the name once.
      assert.equal(fake.callsTo('/v2/player').length, 3);
      assert.equal(fake.callsTo('/users/profiles/minecraft/').length, 2);
    });

    it('makes one upstream call per player: duplicates are one key, spellings of one player one call', async (t) => {
      const { post } = await setup(t);
      fake.misbehave({ delayMs: 50 });
      const given = ['Minikloon', minikloon.uuid, DASHED_MINIKLOON, 'minikloon', 'Minikloon', minikloon.uuid];
      const bulk = await post({ players: given });
      assert.equal(bulk.statusCode, 200, bulk.body);
      const results = resultsOf(bulk);
      assert.deepEqual(Object.keys(results), ['Minikloon', minikloon.uuid, DASHED_MINIKLOON, 'minikloon']);
      const bodies = new Set(Object.values(results).map((result) => JSON.stringify(result)));
      assert.equal(bodies.size, 1, 'every spelling answers the same player');
      assert.equal(fake.callsTo('/v2/player').length, 1);
      assert.equal(
        fake.callsTo('/users/profiles/minecraft/').length,
        1,
        'a username resolves once, any case',
      );
    });

    it('makes one upstream call per player for concurrent bulk reads of the same players', async (t) => {
      const { post } = await setup(t);
      fake.misbehave({ delayMs: 50 });
      const given = [minikloon.uuid, builder.uuid, NEVER_JOINED, 'builder_247'];
      const replies = await Promise.all(Array.from({ length: 10 }, () => post({ players: given })));
      for (const reply of replies) assert.equal(reply.statusCode, 200, reply.body);
      assert.equal(new Set(replies.map((reply) => reply.body)).size, 1, 'every caller gets the same answer');
      assert.equal(fake.callsTo('/v2/player').length, 3);
      assert.equal(fake.callsTo('/users/profiles/minecraft/').length, 1);
    });

    it('refuses bad input with a 400 ErrorResponse naming it, before any lookup', async (t) => {
      const { app, token, post } = await setup(t);
      const cases: [string, unknown, string][] = [
        ['101 players', { players: coldUuids(101, 'e') }, 'body/players'],
        ['0 players', { players: [] }, 'body/players'],
        ['not an array', { players: minikloon.uuid }, 'body/players'],
        ['a number among them', { players: [minikloon.uuid, 42] }, 'body/players/1'],
        ['null among them', { players: [null] }, 'body/players/0'],
        ['a bad player', { players: [minikloon.uuid, 'bad!name'] }, 'body/players/1'],
        ['a name too long', { players: ['a_name_far_too_long'] }, 'body/players/0'],
        ['a UUID one digit long', { players: [`${minikloon.uuid}0`] }, 'body/players/0'],
        ['no players', {}, 'body'],
        ['another field', { players: [minikloon.uuid], more: true }, 'body'],
        ['an array body', [minikloon.uuid], 'body'],
      ];
      for (const [what, payload, where] of cases) {
        const reply = await post(payload);
        assert.equal(reply.statusCode, 400, `${what}: ${reply.body}`);
        const body = JSON.parse(reply.body);
        assert.equal(body.success, false, what);
        assert.equal(body.code, 400, what);
        assert.ok(
          problems(reply).some(
            (problem) => problem.reason.includes(where) || problem.developer_reason.includes(where),
          ),
          `${what}: names ${where} in ${reply.body}`,
        );
      }
      const many = await post({ players: ['bad!1', 'bad!2', 'bad!3', minikloon.uuid, 'bad!4'] });
      assert.equal(many.statusCode, 400);
      assert.equal(problems(many).length, 4, 'each bad player is named');
      const malformed = await app.inject({
        method: 'POST',
        url: '/players',
        headers: { ...bearer(token), 'content-type': 'application/json' },
        payload: '{"players": [',
      });
      assert.equal(malformed.statusCode, 400, malformed.body);
      assert.equal(fake.calls.length, 0, 'nothing was looked up');
    });

    it('refuses a body beyond 16 KiB with a 413 ErrorResponse, and one not JSON with 415', async (t) => {
      const { app, token, post } = await setup(t);
      const huge = await post({ players: [minikloon.uuid, 'x'.repeat(20_000)] });
      assert.equal(huge.statusCode, 413, huge.body);
      assert.equal(JSON.parse(huge.body).code, 413);
      const megabyte = await post({ players: Array.from({ length: 100_000 }, () => minikloon.uuid) });
      assert.equal(megabyte.statusCode, 413);
      const text = await app.inject({
        method: 'POST',
        url: '/players',
        headers: { ...bearer(token), 'content-type': 'text/plain' },
        payload: minikloon.uuid,
      });
      assert.equal(text.statusCode, 415, text.body);
      assert.equal(JSON.parse(text.body).code, 415);
      assert.equal(fake.calls.length, 0);
    });

    it('needs a token with player:read: 401 and 403 ErrorResponses', async (t) => {
      const { app, config, post } = await setup(t);
      const missing = await app.inject({
        method: 'POST',
        url: '/players',
        payload: { players: [minikloon.uuid] },
      });
      assert.equal(missing.statusCode, 401);
      assert.equal(problemName(missing), 'TOKEN_MISSING');
      assert.match(String(missing.headers['www-authenticate']), /^Bearer /);
      const otherGrant = await issueToken(app, config, { grants: ['profiles:read'] });
      const forbidden = await post({ players: [minikloon.uuid] }, otherGrant);
      assert.equal(forbidden.statusCode, 403);
      assert.equal(problemName(forbidden), 'GRANT_MISSING');
      assert.equal(fake.calls.length, 0, 'no upstream call for a refused request');
    });

    it("says where the owner stands: a unit of work per distinct player, and the upstream share's standing", async (t) => {
      // A day's window: the bucket refills 600 units a day, nothing the test's second could show.
      const { get, post } = await setup(t, { WORK_BUDGET_UNITS: '600', WORK_BUDGET_WINDOW_SECONDS: '86400' });
      // The key's limit is known after a first answer; a cached player costs no lookup of the share.
      assert.equal((await get(`/player/${minikloon.uuid}`)).statusCode, 200);
      const given = [minikloon.uuid, DASHED_MINIKLOON, NEVER_JOINED, minikloon.uuid];
      const bulk = await post({ players: given });
      assert.equal(bulk.statusCode, 200);
      assert.deepEqual(rateLimitItem(bulk.headers['ratelimit-policy'], 'upstream'), {
        q: OWNER_SHARE,
        w: 300,
      });
      assert.equal(
        standing(bulk, 'upstream')?.r,
        OWNER_SHARE - 2,
        'one lookup for the GET, one for NEVER_JOINED',
      );
      // 600 units: the GET 1, then 3 distinct players and a body under 1 KiB: 4.
      // (With Redis an instance reserves units ahead, and says where its reservation stands: not checked.)
      const work = standing(bulk, 'work')?.r ?? 0;
      if (backend.cache === 'memory') assert.ok(work >= 595 && work <= 596, `work left ${work}`);
    });

    it('serves the example request of the OpenAPI document, and the docs page lists the route', async (t) => {
      const { app, post } = await setup(t);
      const document = JSON.parse((await app.inject({ method: 'GET', url: '/openapi.json' })).body);
      const example = document.paths['/players'].post.requestBody.content['application/json'].example;
      const reply = await post(example);
      assert.equal(reply.statusCode, 200, reply.body);
      const results = resultsOf(reply);
      assert.deepEqual(Object.keys(results), example.players);
      for (const result of Object.values(results)) assert.equal(result.success, true);
      const page = await app.inject({ method: 'GET', url: '/docs' });
      assert.match(
        page.body,
        /<section class="op" id="op-getPlayers">\n<h4><code class="method">POST<\/code> <code>\/players<\/code>/,
        'the docs page lists it',
      );
    });

    it('gives the items the upstream failed for the failure body GET /player/{player} answers', async (t) => {
      const { get, post } = await setup(t, {
        UPSTREAM_TIMEOUT_MS: '1500',
        UPSTREAM_RETRIES: '0',
        UPSTREAM_BREAKER_FAILURES: '1000',
      });
      assert.equal((await get(`/player/${minikloon.uuid}`)).statusCode, 200);
      const cached = (await get(`/player/${minikloon.uuid}`)).body;
      const cases: [string, Parameters<FakeUpstream['misbehave']>[0], number][] = [
        ['down', { failWith: 503 }, 502],
        ['garbage', { garbage: true }, 502],
        ['slow', { delayMs: 60_000 }, 504],
      ];
      for (const [what, how, status] of cases) {
        fake.reset();
        fake.misbehave(how);
        const single = await get(`/player/${builder.uuid}`);
        assert.equal(single.statusCode, status, `${what}: ${single.body}`);
        const bulk = await post({ players: [minikloon.uuid, builder.uuid, NEVER_JOINED] });
        assert.equal(bulk.statusCode, 200, `${what}: ${bulk.body}`);
        assert.equal(
          bulk.body,
          bulkOf([
            [minikloon.uuid, cached],
            [builder.uuid, single.body],
            [NEVER_JOINED, single.body],
          ]),
          `${what}: the cached player served, the others as the single answer failed`,
        );
      }
    });

    it('serves the players it has when the upstream starts failing midway', async (t) => {
      const { post } = await setup(t, { UPSTREAM_RETRIES: '0', UPSTREAM_BREAKER_FAILURES: '1000' });
      // Two calls answer, then every call fails.
      fake.misbehave({ delayMs: 20 });
      const cold = coldUuids(12, 'f');
      const first = await post({ players: [minikloon.uuid, builder.uuid] });
      assert.equal(first.statusCode, 200);
      fake.misbehave({ failNext: 1000 });
      const bulk = await post({ players: [minikloon.uuid, ...cold, builder.uuid] });
      assert.equal(bulk.statusCode, 200, bulk.body);
      const results = resultsOf(bulk);
      assert.equal(results[minikloon.uuid]?.success, true);
      assert.equal(results[builder.uuid]?.success, true);
      for (const uuid of cold)
        assert.deepEqual(results[uuid], {
          success: false,
          cause: 'hypixel answered with an error (502)',
          throttle: false,
          player: null,
        });
    });
  },
  { caches: true },
);

describeEachBackend(
  'POST /players within the shares and budgets of owners',
  (backend) => {
    let fake: FakeUpstream;
    before(async () => {
      // Any UUID is a player (a copy of the fixture's), so that cold players are found.
      fake = await startFakeUpstream({
        rateLimit: KEY_LIMIT,
        anyPlayer: readFileSync(new URL('../../fixtures/hypixel/player.json', import.meta.url)),
      });
    });
    after(() => fake.close());
    const setup = async (t: TestContext, env: Record<string, string> = {}) => {
      const test = await buildPlayerTestApp(t, fake, { backend, env });
      const post = (players: readonly string[], token = test.token) =>
        test.app.inject({ method: 'POST', url: '/players', headers: bearer(token), payload: { players } });
      return { ...test, post };
    };

    it("fetches misses within the caller's share; the rest answer throttle: true, the cached ones are served", async (t) => {
      const { app, config, get, post } = await setup(t);
      assert.equal((await get(`/player/${minikloon.uuid}`)).statusCode, 200);
      const cached = (await get(`/player/${minikloon.uuid}`)).body;
      const cold = coldUuids(60, 'a');
      const bulk = await post([...cold.slice(0, 30), minikloon.uuid, ...cold.slice(30)]);
      assert.equal(bulk.statusCode, 200, bulk.body);
      const results = resultsOf(bulk);
      assert.equal(Object.keys(results).length, 61);
      assert.deepEqual(results[minikloon.uuid], JSON.parse(cached), 'the cached player is served');
      const found = cold.filter((uuid) => results[uuid]?.success);
      const throttled = cold.filter((uuid) => results[uuid]?.throttle);
      assert.equal(found.length, OWNER_SHARE - 1, 'the share, less the first GET');
      assert.equal(found.length + throttled.length, cold.length);
      for (const uuid of throttled) {
        assert.deepEqual(Object.keys(results[uuid] ?? {}), ['success', 'cause', 'throttle', 'player']);
        assert.match(
          String(results[uuid]?.cause),
          /^your share of the upstream budget is used up \(25 uncached/,
        );
      }
      for (const uuid of found)
        assert.equal((results[uuid]?.player as { uuid?: string } | undefined)?.uuid, uuid);
      assert.equal(fake.callsTo('/v2/player').length, OWNER_SHARE, 'never beyond the share');
      assert.equal(standing(bulk, 'upstream')?.r, 0);
      // A throttled item is what the single read answers, byte for byte.
      const single = await get(`/player/${throttled[0]}`);
      assert.equal(single.statusCode, 429);
      assert.equal(JSON.stringify(results[throttled[0] ?? '']), single.body);

      // Another owner's share is whole: their bulk read is fetched.
      const other = await issueToken(app, config, { owner: OTHER_OWNER });
      const theirs = await post(coldUuids(10, 'b'), other);
      assert.ok(Object.values(resultsOf(theirs)).every((result) => result.success));
      assert.equal(standing(theirs, 'upstream')?.r, OWNER_SHARE - 10);
    });

    it('serves 100 cached players at once, each as the single read does', async (t) => {
      const { get, post } = await setup(t, { UPSTREAM_OWNER_SHARE_PERCENT: '100' });
      const players = coldUuids(100, 'c');
      const first = await post(players);
      assert.equal(first.statusCode, 200);
      assert.ok(Object.values(resultsOf(first)).every((result) => result.success));
      const again = await post(players);
      assert.equal(again.body, first.body, 'the same bytes from the cache');
      assert.equal(fake.callsTo('/v2/player').length, 100);
      const singles = await Promise.all(players.map((player) => get(`/player/${player}`)));
      assert.ok(singles.every((single) => single.headers['x-cache'] === 'HIT'));
      assert.equal(
        again.body,
        bulkOf(players.map((player, index) => [player, singles[index]?.body ?? ''])),
        'each item is the single answer, byte for byte',
      );
    });

    it("charges the caller's budget of work: one owner's bulk reads cannot starve another's", async (t) => {
      const { app, config, get, post } = await setup(t, {
        WORK_BUDGET_UNITS: '250',
        WORK_BUDGET_WINDOW_SECONDS: '300',
        WORK_BUDGET_REFUSAL_DELAY_MS: '0',
        UPSTREAM_OWNER_SHARE_PERCENT: '100',
      });
      const players = coldUuids(100, 'd');
      assert.equal((await post(players)).statusCode, 200);
      const calls = fake.callsTo('/v2/player').length;
      // 100 units (and the body's 4) a read: the third finds the budget short.
      assert.equal((await post(players)).statusCode, 200);
      const refused = await post(players);
      assert.equal(refused.statusCode, 429, refused.body);
      assert.equal(problemName(refused), 'WORK_BUDGET_EXHAUSTED');
      assert.ok(Number(refused.headers['retry-after']) >= 1);
      assert.equal(fake.callsTo('/v2/player').length, calls, 'the refused read looked nothing up');
      // The other owner's reads go on, on a whole budget of their own.
      const other = await issueToken(app, config, { owner: OTHER_OWNER });
      const read = await get(`/player/${players[0]}`, other);
      assert.equal(read.statusCode, 200);
      assert.ok((standing(read, 'work')?.r ?? 0) >= 200, String(read.headers.ratelimit));
      const theirs = await post(players.slice(0, 50), other);
      assert.equal(theirs.statusCode, 200);
    });
  },
  { caches: true },
);
