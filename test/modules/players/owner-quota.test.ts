import assert from 'node:assert/strict';
import { after, before, it, type TestContext } from 'node:test';
import { describeEachBackend, describeOrSkip } from '../../helpers/backends.js';
import { buildTestApp } from '../../helpers/build-test-app.js';
import { skipWithoutRedis } from '../../helpers/environment.js';
import { type FakeUpstream, FIXTURE_PLAYERS, startFakeUpstream } from '../../helpers/fake-upstream.js';
import { buildPlayerTestApp } from '../../helpers/player-app.js';
import { rateLimitItem } from '../../helpers/replies.js';
import { bearer, issueToken } from '../../helpers/tokens.js';

/** Each lookup of a stale copy waits for its call, however slow a loaded machine makes it (no 1 s deadline). */
const WAIT_FOR_CALLS = '60000';

const { minikloon } = FIXTURE_PLAYERS;
const OTHER_OWNER = 987654321098765432n;
/** The fake key's limit per window, and the share of it one owner gets by default (25 %). */
const KEY_LIMIT = 100;
const OWNER_SHARE = 25;
const WINDOW_SECONDS = 300;

/** Cold UUIDs nobody has looked up: each costs an upstream call (the fake says "never joined": 404). */
const coldUuids = (count: number, salt: string) =>
  Array.from({ length: count }, (_, index) => `${salt}${index.toString(16).padStart(32 - salt.length, '0')}`);

/** The `"upstream"` item of a RateLimit (`r`, `t`) or RateLimit-Policy (`q`, `w`) header. */
function parameters(header: unknown): Record<string, number> {
  const item = rateLimitItem(header, 'upstream');
  assert.ok(item, `the upstream policy is in ${String(header)}`);
  return item;
}

describeEachBackend(
  "each owner's share of the upstream key",
  (backend) => {
    let fake: FakeUpstream;
    before(async () => {
      fake = await startFakeUpstream({ rateLimit: KEY_LIMIT, rateLimitWindowSeconds: WINDOW_SECONDS });
    });
    after(() => fake.close());
    const setup = (t: TestContext, env: Record<string, string> = {}) =>
      buildPlayerTestApp(t, fake, { backend, env });

    it('150 cold lookups by one owner make at most 25 upstream calls; another owner is still served', async (t) => {
      const { app, config, get, logs } = await setup(t);
      const replies = await Promise.all(coldUuids(150, 'a').map((uuid) => get(`/player/${uuid}`)));
      const calls = fake.callsTo('/v2/player').length;
      assert.ok(calls <= OWNER_SHARE, `${calls} upstream calls for one owner; the share is ${OWNER_SHARE}`);
      assert.ok(calls >= 1);
      const refused = replies.filter((reply) => reply.statusCode === 429);
      assert.equal(refused.length + calls, 150, 'every lookup not sent was refused');
      for (const reply of refused) {
        const body = reply.json();
        assert.equal(body.success, false);
        assert.equal(body.throttle, true);
        assert.equal(body.player, null);
        assert.match(
          body.cause,
          /your share of the upstream budget is used up \(25 uncached lookups per 300 s/,
        );
        assert.ok(Number(reply.headers['retry-after']) >= 1);
        assert.ok(Number(reply.headers['retry-after']) <= WINDOW_SECONDS);
        assert.equal(reply.headers['cache-control'], 'no-store');
      }
      const last = refused.at(-1);
      assert.deepEqual(parameters(last?.headers['ratelimit-policy']), { q: OWNER_SHARE, w: WINDOW_SECONDS });
      assert.equal(parameters(last?.headers.ratelimit).r, 0);

      // The key still has budget: another owner's cold lookup goes out and is answered.
      const otherToken = await issueToken(app, config, { owner: OTHER_OWNER });
      const other = await get(`/player/${minikloon.uuid}`, otherToken);
      assert.equal(other.statusCode, 200, other.body);
      assert.equal(parameters(other.headers.ratelimit).r, OWNER_SHARE - 1);

      // The first owner still gets what is cached, and no more upstream calls.
      const cached = await get(`/player/${minikloon.uuid}`);
      assert.equal(cached.statusCode, 200);
      assert.equal(cached.headers['x-cache'], 'HIT');
      assert.equal(
        parameters(cached.headers.ratelimit).r,
        0,
        'a cache hit costs nothing, and tells the standing',
      );

      const usedUp = logs.lines.filter((line) =>
        String(line.msg).startsWith('an owner used up their upstream quota'),
      );
      assert.equal(usedUp.length, 1, 'logged once when it ran out, not per refused request');
      assert.equal(usedUp[0]?.owner, '123456789012345678');
    });

    it('counts username resolutions, never cache hits, and tells the standing on every answer', async (t) => {
      const { get } = await setup(t);
      const first = await get('/player/minikloon');
      assert.equal(first.statusCode, 200);
      // A Mojang and a Hypixel call.
      assert.deepEqual(parameters(first.headers['ratelimit-policy']), { q: OWNER_SHARE, w: WINDOW_SECONDS });
      const standing = parameters(first.headers.ratelimit);
      assert.equal(standing.r, OWNER_SHARE - 2);
      assert.ok(standing.t !== undefined && standing.t >= 1 && standing.t <= WINDOW_SECONDS);
      for (const url of ['/player/minikloon', `/player/${minikloon.uuid}`]) {
        const hit = await get(url);
        assert.equal(hit.headers['x-cache'], 'HIT');
        assert.equal(parameters(hit.headers.ratelimit).r, OWNER_SHARE - 2, url);
      }
      const profiles = await get(`/gamemode/profiles/${minikloon.uuid}`);
      assert.equal(profiles.statusCode, 200);
      assert.equal(parameters(profiles.headers.ratelimit).r, OWNER_SHARE - 3);
    });

    it('follows UPSTREAM_OWNER_SHARE_PERCENT, and lets a stale copy stand in for a refused lookup', async (t) => {
      const { get } = await setup(t, {
        UPSTREAM_OWNER_SHARE_PERCENT: '2',
        CACHE_PLAYER_FRESH_SECONDS: '0',
        CACHE_STALE_DEADLINE_MS: WAIT_FOR_CALLS,
      });
      assert.equal((await get(`/player/${minikloon.uuid}`)).statusCode, 200);
      assert.equal((await get(`/player/${minikloon.uuid}`)).headers['x-cache'], 'MISS');
      // Two lookups used the share of 2: the next is refused, and the copy it has stands in.
      const stale = await get(`/player/${minikloon.uuid}`);
      assert.equal(stale.statusCode, 200);
      assert.equal(stale.headers['x-cache'], 'STALE');
      assert.equal(fake.callsTo('/v2/player').length, 2);
      assert.deepEqual(parameters(stale.headers['ratelimit-policy']), { q: 2, w: WINDOW_SECONDS });
    });

    it("another owner joining a refused owner's lookup of the same player is served", async (t) => {
      const { app, config, get } = await setup(t, { UPSTREAM_OWNER_SHARE_PERCENT: '1' });
      // The first owner spends their one lookup.
      assert.equal((await get(`/player/${coldUuids(1, 'b')[0]}`)).statusCode, 404);
      const otherToken = await issueToken(app, config, { owner: OTHER_OWNER });
      fake.misbehave({ delayMs: 50 });
      const [refused, served] = await Promise.all([
        get(`/player/${minikloon.uuid}`),
        get(`/player/${minikloon.uuid}`, otherToken),
      ]);
      assert.equal(refused.statusCode, 429);
      assert.equal(served.statusCode, 200, served.body);
    });
  },
  { caches: true },
);

describeOrSkip('the owner quota across instances sharing Redis', { skip: skipWithoutRedis }, () => {
  it('is one quota for both instances', async (t) => {
    const fake = await startFakeUpstream({ rateLimit: KEY_LIMIT, rateLimitWindowSeconds: WINDOW_SECONDS });
    t.after(() => fake.close());
    const first = await buildTestApp(t, { upstream: fake, redis: true });
    const second = await buildTestApp(t, {
      upstream: fake,
      redis: true,
      databaseUrl: first.databaseUrl,
      redisKeyPrefix: first.config.redisKeyPrefix,
    });
    const token = await issueToken(first.app, first.config);
    const apps = [first.app, second.app];
    await Promise.all(
      coldUuids(60, 'c').map((uuid, index) =>
        apps[index % 2]?.inject({ method: 'GET', url: `/player/${uuid}`, headers: bearer(token) }),
      ),
    );
    const calls = fake.callsTo('/v2/player').length;
    assert.ok(
      calls <= OWNER_SHARE,
      `${calls} upstream calls over two instances; the share is ${OWNER_SHARE}`,
    );
  });
});
