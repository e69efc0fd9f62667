import assert from 'node:assert/strict';
import { it, type TestContext } from 'node:test';
import { Redis } from 'ioredis';
import { describeOrSkip } from '../../helpers/backends.js';
import { buildTestApp, type LogCapture, type TestApp } from '../../helpers/build-test-app.js';
import { skipWithoutRedis, testRedisUrl } from '../../helpers/environment.js';
import { FIXTURE_PLAYERS, startFakeUpstream } from '../../helpers/fake-upstream.js';
import { eventually } from '../../helpers/poll.js';
import { startTcpProxy, throughProxy } from '../../helpers/tcp-proxy.js';
import { bearer, issueToken } from '../../helpers/tokens.js';

/*
 * Redis going away while the service runs, and coming back (redis-down.test.ts covers a Redis that was never
 * there): requests keep being answered from the in-process cache and an in-process budget, the log says
 * Redis is unavailable, and once Redis is back the instance shares its cache and budget again by itself.
 */

const { minikloon, builder } = FIXTURE_PLAYERS;
/** The key's limit in the fake: room for the test's own lookups, and a burst that must be held below it. */
const KEY_LIMIT = 12;
/** The owner quota out of the way: one owner may spend the whole key; the key's budget is under test. */
const WHOLE_KEY = { UPSTREAM_OWNER_SHARE_PERCENT: '100' };
/**
 * A wide bound on one answer while Redis is away (five of the service's 1 s Redis command timeouts, and
 * UPSTREAM_TIMEOUT_MS's default): Redis is a shortcut, so its absence must not cost more than the upstream.
 */
const ANSWER_BOUND_MS = 5000;

/** A cold player per index: the fake knows none of them, so each costs one upstream call (404). */
const cold = (index: number) => index.toString(16).padStart(32, 'e');

/**
 * Two instances of one deployment (one database, one Redis key space): `cut` reaches Redis through a proxy
 * the test cuts; `steady` reaches it directly and shows what is in Redis.
 */
async function deployment(t: TestContext) {
  const fake = await startFakeUpstream({ rateLimit: KEY_LIMIT, rateLimitWindowSeconds: 60 });
  t.after(() => fake.close());
  const target = new URL(String(testRedisUrl));
  const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
  t.after(() => proxy.close());
  const cut = await buildTestApp(t, {
    upstream: fake,
    env: { ...WHOLE_KEY, REDIS_URL: throughProxy(String(testRedisUrl), proxy) },
  });
  const steady = await buildTestApp(t, {
    upstream: fake,
    redis: true,
    env: WHOLE_KEY,
    databaseUrl: cut.databaseUrl,
    redisKeyPrefix: cut.config.redisKeyPrefix,
  });
  const admin = new Redis(String(testRedisUrl));
  t.after(() => admin.quit());
  const token = await issueToken(cut.app, cut.config);
  const get = async ({ app }: TestApp, player: string) => {
    const started = performance.now();
    const reply = await app.inject({ method: 'GET', url: `/player/${player}`, headers: bearer(token) });
    return { reply, tookMs: performance.now() - started };
  };
  /** What the shared budget in Redis has left of the key. */
  const sharedRemaining = async () =>
    Number(await admin.hget(`${cut.config.redisKeyPrefix}budget:hypixel`, 'remaining'));
  return { fake, proxy, cut, steady, get, sharedRemaining };
}

const warned = (logs: LogCapture, message: string) =>
  logs.lines.some((line) => line.level === 'warn' && line.msg === message);
/** How many lines say `message`. */
const said = (logs: LogCapture, message: string) => logs.lines.filter((line) => line.msg === message).length;

describeOrSkip('players while Redis goes away and comes back', { skip: skipWithoutRedis }, () => {
  it('answers from the in-process cache and budget meanwhile, logs it, and shares again once Redis is back', async (t) => {
    const { fake, proxy, cut, steady, get, sharedRemaining } = await deployment(t);

    // Redis up: one instance's fetch is the other's hit, and the budget is counted in Redis.
    assert.equal((await get(cut, minikloon.uuid)).reply.headers['x-cache'], 'MISS');
    assert.equal((await get(steady, minikloon.uuid)).reply.headers['x-cache'], 'HIT');
    const remainingBefore = await sharedRemaining();
    assert.equal(remainingBefore, KEY_LIMIT - 1);

    proxy.cut();
    // What the instance fetched before is still served from process memory, without an upstream call.
    const kept = await get(cut, minikloon.uuid);
    assert.equal(kept.reply.statusCode, 200);
    assert.equal(kept.reply.headers['x-cache'], 'HIT');
    // A new player is fetched (the cache reads as a miss), then kept in process too.
    const fetched = await get(cut, builder.uuid);
    assert.equal(fetched.reply.statusCode, 200, fetched.reply.body);
    assert.equal(fetched.reply.headers['x-cache'], 'MISS');
    assert.equal((await get(cut, builder.uuid)).reply.headers['x-cache'], 'HIT');
    assert.equal(fake.callsTo('/v2/player').length, 2);

    // A burst of cold lookups is held to what the key has left, by the instance's own budget.
    const leftOnKey = KEY_LIMIT - 2;
    const burst = await Promise.all(Array.from({ length: 20 }, (_, index) => get(cut, cold(index))));
    const burstCalls = fake.callsTo('/v2/player').length - 2;
    assert.ok(
      burstCalls >= 1 && burstCalls <= leftOnKey,
      `${burstCalls} calls, ${leftOnKey} left on the key`,
    );
    const statuses = burst.map(({ reply }) => reply.statusCode);
    assert.ok(
      statuses.every((status) => status === 404 || status === 429),
      `only answers of the upstream or the budget: ${statuses}`,
    );
    assert.equal(statuses.filter((status) => status === 404).length, burstCalls, 'each call answered one');
    for (const { tookMs } of [kept, fetched, ...burst])
      assert.ok(tookMs < ANSWER_BOUND_MS, `an answer took ${Math.round(tookMs)} ms`);
    assert.equal(await sharedRemaining(), remainingBefore, "the outage's calls were not counted in Redis");
    assert.ok(warned(cut.logs, 'redis cache unavailable; treating as a miss'), 'the cache outage is logged');
    assert.ok(
      warned(cut.logs, "redis budget unavailable; using this instance's own budget"),
      'the budget outage is logged',
    );
    assert.equal((await cut.app.inject({ method: 'GET', url: '/ready' })).statusCode, 503);

    // The key's window starts over upstream; Redis comes back; the instance finds it by itself.
    fake.reset();
    proxy.restore();
    await eventually('ready once Redis answers', async () => {
      return (await cut.app.inject({ method: 'GET', url: '/ready' })).statusCode === 200;
    });
    const after = cold(100);
    assert.equal((await get(cut, after)).reply.headers['x-cache'], 'MISS');
    const seen = await get(steady, after);
    assert.equal(seen.reply.statusCode, 404);
    assert.equal(seen.reply.headers['x-cache'], 'HIT', 'its fetch landed in the shared cache');
    assert.equal(fake.callsTo('/v2/player').length, 1, 'one upstream call for both instances');
    assert.equal(await sharedRemaining(), remainingBefore - 1, 'its call is counted in the shared budget');
    // Each Redis user said so once as the outage began and once as it ended, not once per call (the
    // outage's 23 lookups each made several).
    const outages: [failed: string, back: string][] = [
      ['redis cache unavailable; treating as a miss', 'redis cache available again'],
      ["redis budget unavailable; using this instance's own budget", 'redis budget available again'],
    ];
    for (const [failed, back] of outages) {
      assert.equal(said(cut.logs, failed), 1, failed);
      assert.equal(said(cut.logs, back), 1, back);
    }
  });

  it('gone silent (a partition: no error, no answer), still answers in bounded time, and shares again once back', async (t) => {
    const { fake, proxy, cut, steady, get, sharedRemaining } = await deployment(t);
    assert.equal((await get(cut, minikloon.uuid)).reply.headers['x-cache'], 'MISS');
    const remainingBefore = await sharedRemaining();

    proxy.freeze();
    const kept = await get(cut, minikloon.uuid);
    const fetched = await get(cut, builder.uuid);
    const keptAgain = await get(cut, builder.uuid);
    // Judged after Redis is back, so that the recovery is checked whatever these say.
    const answers = { kept, fetched, keptAgain };

    proxy.restore();
    await eventually('ready once Redis answers', async () => {
      return (await cut.app.inject({ method: 'GET', url: '/ready' })).statusCode === 200;
    });
    // Commands sent before the instance dropped the silent connection may still reach Redis once the way
    // flows again (a budget take among them, whose ticket lapses later: the shared count may be lower,
    // never higher).
    const remainingBack = await sharedRemaining();
    assert.ok(remainingBack <= remainingBefore);
    const after = cold(200);
    assert.equal((await get(cut, after)).reply.headers['x-cache'], 'MISS');
    assert.equal((await get(steady, after)).reply.headers['x-cache'], 'HIT', 'its fetch landed in Redis');
    assert.ok((await sharedRemaining()) < remainingBack, 'its call is counted in the shared budget');
    assert.equal(fake.callsTo('/v2/player').length, 3, 'Minikloon, builder, and the one after');

    assert.deepEqual(
      Object.values(answers).map(({ reply }) => [reply.statusCode, reply.headers['x-cache']]),
      [
        [200, 'HIT'],
        [200, 'MISS'],
        [200, 'HIT'],
      ],
    );
    for (const [what, { tookMs }] of Object.entries(answers))
      assert.ok(
        tookMs < ANSWER_BOUND_MS,
        `${what}: answered after ${Math.round(tookMs)} ms with Redis silent`,
      );
  });
});
