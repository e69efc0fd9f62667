import assert from 'node:assert/strict';
import { after, before, it, type TestContext } from 'node:test';
import { sql } from 'kysely';
import { describeEachBackend } from '../../helpers/backends.js';
import { buildTestApp } from '../../helpers/build-test-app.js';
import { type FakeUpstream, FIXTURE_PLAYERS, startFakeUpstream } from '../../helpers/fake-upstream.js';
import { buildPlayerTestApp } from '../../helpers/player-app.js';
import { fixtureJson } from '../../helpers/player-fixtures.js';
import { eventually } from '../../helpers/poll.js';
import { bearer, issueToken } from '../../helpers/tokens.js';

/*
 * The upstream failing, then coming back: the service serves its stale copy meanwhile without hammering the
 * upstream, and goes back to fresh answers by itself, with no restart and nobody resetting anything.
 * (players.test.ts covers the stale copy and the statuses while the upstream is down, slow, throttling or
 * answering garbage; upstream-accounting.test.ts the breaker's trial call for a cold player.)
 */

const { minikloon, builder } = FIXTURE_PLAYERS;
const PLAYER_URL = `/player/${minikloon.uuid}`;
/** The fake's key window, started again just before it throttles: its 429 says to wait this long. */
const WINDOW_SECONDS = 3;
/**
 * Every lookup goes upstream (nothing stays fresh), so a fresh answer shows a call was made; and each waits
 * for its call. With the default stale deadline (1 s), a call a loaded machine slowed past it was answered
 * with the stale copy while the call went on, and the next poll made another: one call more than the test
 * counts (seen once in CI on Node 22).
 */
const NEVER_FRESH = {
  CACHE_PLAYER_FRESH_SECONDS: '0',
  UPSTREAM_RETRIES: '0',
  CACHE_STALE_DEADLINE_MS: '60000',
};

describeEachBackend(
  'a recovering upstream',
  (backend) => {
    let fake: FakeUpstream;
    before(async () => {
      fake = await startFakeUpstream({ rateLimitWindowSeconds: WINDOW_SECONDS });
    });
    after(() => fake.close());
    const setup = (t: TestContext, env: Record<string, string>) =>
      buildPlayerTestApp(t, fake, { backend, env: { ...NEVER_FRESH, ...env } });

    it('after an outage: stale answers meanwhile, calls paused, then fresh ones once it is back', async (t) => {
      const { get, logs } = await setup(t, {
        UPSTREAM_BREAKER_FAILURES: '2',
        // Long enough for the third request to come within it on a loaded machine.
        UPSTREAM_BREAKER_COOLDOWN_MS: '2000',
      });
      assert.equal((await get(PLAYER_URL)).headers['x-cache'], 'MISS');

      fake.misbehave({ failWith: 503 });
      for (let request = 0; request < 3; request++) {
        const reply = await get(PLAYER_URL);
        assert.equal(reply.statusCode, 200);
        assert.equal(reply.headers['x-cache'], 'STALE');
      }
      assert.equal(
        fake.callsTo('/v2/player').length,
        3,
        'two failures opened the circuit: the third sent nothing',
      );

      fake.reset();
      await eventually('a fresh answer after the cooldown', async () => {
        const reply = await get(PLAYER_URL);
        assert.equal(reply.statusCode, 200, 'the copy stands in until then');
        return reply.headers['x-cache'] === 'MISS';
      });
      assert.equal(fake.callsTo('/v2/player').length, 1, 'one trial call closed the circuit');
      assert.ok(logs.lines.some((line) => line.msg === 'upstream circuit closed: calls resumed'));

      // Closed for good: the next lookup is fetched again, and served as the upstream sent it.
      const next = await get(PLAYER_URL);
      assert.equal(next.headers['x-cache'], 'MISS');
      assert.equal(next.headers.age, '0');
      assert.deepEqual(next.json().player, fixtureJson('player.json').player);
      assert.equal(fake.callsTo('/v2/player').length, 2);
    });

    it('after it throttles: stale answers meanwhile, nothing sent until its reset, then fresh ones', async (t) => {
      const { get } = await setup(t, {});
      assert.equal((await get(PLAYER_URL)).headers['x-cache'], 'MISS');

      fake.reset();
      fake.misbehave({ throttle: { global: true } });
      const throttled = await get(PLAYER_URL);
      assert.equal(throttled.statusCode, 200);
      assert.equal(throttled.headers['x-cache'], 'STALE', 'the copy stands in for a throttled lookup');
      const paused = await get(PLAYER_URL);
      assert.equal(paused.headers['x-cache'], 'STALE');
      assert.equal(fake.callsTo('/v2/player').length, 1, 'nothing is sent between the 429 and its reset');

      fake.misbehave({ throttle: false });
      await eventually(
        'a fresh answer after the reset',
        async () => {
          const reply = await get(PLAYER_URL);
          assert.equal(reply.statusCode, 200, 'the copy stands in until then');
          return reply.headers['x-cache'] === 'MISS';
        },
        { withinMs: (WINDOW_SECONDS + 8) * 1000, everyMs: 100 },
      );
      assert.equal(fake.callsTo('/v2/player').length, 2, 'one call once the key reset');
      assert.equal((await get(PLAYER_URL)).headers['x-cache'], 'MISS', 'and the budget spends again');
    });

    it('after a restart, a stored copy stands in by its own age, and a name seen before still resolves', async (t) => {
      const first = await setup(t, {});
      assert.equal(
        (await first.get(`/player/${minikloon.name}`)).statusCode,
        200,
        'by name: the name recorded',
      );
      assert.equal((await first.get(`/player/${builder.uuid}`)).statusCode, 200);
      const now = Date.now();
      await sql`update player_snapshots set fetched_at = ${now - 30_000} where uuid = ${minikloon.uuid}`.execute(
        first.app.db,
      );
      await sql`update player_snapshots set fetched_at = ${now - 7_200_000} where uuid = ${builder.uuid}`.execute(
        first.app.db,
      );
      // A new instance on the same database (nothing in its memory), with Hypixel and Mojang down.
      const second = await buildTestApp(t, {
        backend,
        databaseUrl: first.databaseUrl,
        migrate: false,
        upstream: fake,
        env: { ...NEVER_FRESH, CACHE_STALE_IF_ERROR_SECONDS: '3600' },
      });
      const token = await issueToken(second.app, second.config);
      const get = (url: string) => second.app.inject({ method: 'GET', url, headers: bearer(token) });
      fake.misbehave({ failWith: 500 });
      const stale = await get(`/player/${minikloon.name}`);
      assert.equal(stale.statusCode, 200, stale.body);
      assert.equal(stale.headers['x-cache'], 'STALE');
      assert.ok(
        Number(stale.headers.age) >= 30 && Number(stale.headers.age) < 3600,
        `age ${stale.headers.age}`,
      );
      // Fetched two hours ago: beyond what stale-if-error allows, so no copy stands in.
      const tooOld = await get(`/player/${builder.uuid}`);
      assert.equal(tooOld.statusCode, 502, tooOld.body);
    });
  },
  { caches: true },
);
