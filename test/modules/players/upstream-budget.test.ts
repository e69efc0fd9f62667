import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp } from '../../helpers/build-test-app.js';
import { testRedisUrl } from '../../helpers/environment.js';
import { startFakeUpstream } from '../../helpers/fake-upstream.js';
import { bearer, issueToken } from '../../helpers/tokens.js';

const uuids = (count: number) =>
  Array.from({ length: count }, (_, index) => index.toString(16).padStart(32, 'a'));

describe('the upstream budget under a burst', () => {
  it('is never exceeded: 30 cold players at once against a key allowing 5', async (t) => {
    const fake = await startFakeUpstream({ rateLimit: 5, rateLimitWindowSeconds: 60 });
    const { app, config } = await buildTestApp({ upstream: fake });
    t.after(async () => {
      await app.close();
      await fake.close();
    });
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

describe('players across instances sharing Redis', {
  skip: testRedisUrl ? false : 'TEST_REDIS_URL is not set',
}, () => {
  async function twoInstances(fake: Awaited<ReturnType<typeof startFakeUpstream>>) {
    const first = await buildTestApp({ upstream: fake, redis: true });
    const databaseUrl =
      first.config.database.dialect === 'sqlite'
        ? `sqlite:${first.config.database.path}`
        : first.config.database.url;
    const second = await buildTestApp({
      upstream: fake,
      redis: true,
      databaseUrl,
      redisKeyPrefix: first.config.redisKeyPrefix,
    });
    const token = await issueToken(first.app, first.config);
    return {
      apps: [first.app, second.app],
      token,
      close: async () => Promise.all([second.app.close(), first.app.close()]),
    };
  }

  it('makes one upstream call for 200 concurrent requests for one cold player over two instances', async (t) => {
    const fake = await startFakeUpstream();
    const { apps, token, close } = await twoInstances(fake);
    t.after(async () => {
      await close();
      await fake.close();
    });
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
    const { apps, token, close } = await twoInstances(fake);
    t.after(async () => {
      await close();
      await fake.close();
    });
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
