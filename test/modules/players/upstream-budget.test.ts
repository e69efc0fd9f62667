import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { describeOrSkip } from '../../helpers/backends.js';
import { buildTestApp } from '../../helpers/build-test-app.js';
import { skipWithoutRedis } from '../../helpers/environment.js';
import { type FakeUpstream, startFakeUpstream } from '../../helpers/fake-upstream.js';
import { bearer, issueToken } from '../../helpers/tokens.js';

const uuids = (count: number) =>
  Array.from({ length: count }, (_, index) => index.toString(16).padStart(32, 'a'));

/** The owner quota (owner-quota.test.ts) out of the way: one owner may spend all of the key. */
const WHOLE_KEY = { UPSTREAM_OWNER_SHARE_PERCENT: '100' };

describe('the upstream budget under a burst', () => {
  it('is never exceeded: 30 cold players at once against a key allowing 5', async (t) => {
    const fake = await startFakeUpstream({ rateLimit: 5, rateLimitWindowSeconds: 60 });
    t.after(() => fake.close());
    // One owner may spend the whole key here: the budget, not the owner's share of it, is under test.
    const { app, config } = await buildTestApp(t, { upstream: fake, env: WHOLE_KEY });
    const token = await issueToken(app, config);
    const replies = await Promise.all(
      uuids(30).map((uuid) => app.inject({ method: 'GET', url: `/player/${uuid}`, headers: bearer(token) })),
    );
    const calls = fake.callsTo('/v2/player').length;
    assert.ok(calls <= 5, `${calls} calls to a key that allows 5`);
    assert.equal(
      replies.filter((reply) => reply.statusCode === 404).length,
      calls,
      'each call answered a request',
    );
    for (const reply of replies.filter((candidate) => candidate.statusCode !== 404)) {
      assert.equal(reply.statusCode, 429);
      assert.equal(reply.json().throttle, true);
    }
  });
});

describe('a 429 that does not say when', () => {
  it('pauses the budget as long as the answer tells the client to wait, not the whole window', async (t) => {
    const fake = await startFakeUpstream();
    t.after(() => fake.close());
    const { app, config } = await buildTestApp(t, {
      upstream: fake,
      env: { ...WHOLE_KEY, UPSTREAM_RETRIES: '0' },
    });
    const token = await issueToken(app, config);
    fake.misbehave({ answerWith: { status: 429, body: '' } });
    const first = await app.inject({ method: 'GET', url: '/player/SomeName', headers: bearer(token) });
    assert.equal(first.statusCode, 429, first.body);
    assert.equal(first.headers['retry-after'], '60');
    // Mojang's window is 600 s: a later lookup is told the rest of the same 60 s pause, not 600.
    const other = await issueToken(app, config, { owner: 99n });
    const later = await app.inject({ method: 'GET', url: '/player/OtherName', headers: bearer(other) });
    assert.equal(later.statusCode, 429, later.body);
    const wait = Number(later.headers['retry-after']);
    assert.ok(wait >= 1 && wait <= 60, `Retry-After ${wait}`);
  });
});

describeOrSkip('players across instances sharing Redis', { skip: skipWithoutRedis }, () => {
  /** Two instances of one deployment: one database, one Redis key space. */
  async function twoInstances(t: TestContext, fake: FakeUpstream) {
    const first = await buildTestApp(t, { upstream: fake, redis: true, env: WHOLE_KEY });
    const second = await buildTestApp(t, {
      upstream: fake,
      redis: true,
      env: WHOLE_KEY,
      databaseUrl: first.databaseUrl,
      redisKeyPrefix: first.config.redisKeyPrefix,
    });
    const token = await issueToken(first.app, first.config);
    return { apps: [first.app, second.app], token };
  }

  it('makes one upstream call for 200 concurrent requests for one cold player over two instances', async (t) => {
    const fake = await startFakeUpstream();
    t.after(() => fake.close());
    const { apps, token } = await twoInstances(t, fake);
    fake.misbehave({ delayMs: 100 });
    const replies = await Promise.all(
      Array.from({ length: 200 }, (_, index) =>
        apps[index % 2]?.inject({
          method: 'GET',
          url: '/player/20934ef9488c465180a78f861586b4cf',
          headers: bearer(token),
        }),
      ),
    );
    assert.ok(replies.every((reply) => reply?.statusCode === 200));
    assert.equal(fake.callsTo('/v2/player').length, 1);
    // The second instance reads the first one's answer from the shared cache.
    const later = await apps[1]?.inject({
      method: 'GET',
      url: '/player/20934ef9488c465180a78f861586b4cf',
      headers: bearer(token),
    });
    assert.equal(later?.headers['x-cache'], 'HIT');
  });

  it('keeps one budget for both instances under a burst', async (t) => {
    const fake = await startFakeUpstream({ rateLimit: 5, rateLimitWindowSeconds: 60 });
    t.after(() => fake.close());
    const { apps, token } = await twoInstances(t, fake);
    const replies = await Promise.all(
      uuids(30).map((uuid, index) =>
        apps[index % 2]?.inject({ method: 'GET', url: `/player/${uuid}`, headers: bearer(token) }),
      ),
    );
    const calls = fake.callsTo('/v2/player').length;
    assert.ok(calls <= 5, `${calls} calls to a key that allows 5`);
    assert.ok(replies.every((reply) => reply?.statusCode === 404 || reply?.statusCode === 429));
  });
});
