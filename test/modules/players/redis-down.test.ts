import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp } from '../../helpers/build-test-app.js';
import { FIXTURE_PLAYERS, startFakeUpstream } from '../../helpers/fake-upstream.js';
import { bearer, issueToken } from '../../helpers/tokens.js';

// Port 1 on loopback: nothing listens, so every Redis command fails at once.
const DEAD_REDIS = { REDIS_URL: 'redis://127.0.0.1:1' };

describe('with Redis configured but down', () => {
  it('still serves players (the cache reads as a miss), keeps the budget per instance, and refreshes tokens', async (t) => {
    const fake = await startFakeUpstream({ rateLimit: 5, rateLimitWindowSeconds: 60 });
    t.after(() => fake.close());
    const { app, config } = await buildTestApp(t, { upstream: fake, env: DEAD_REDIS });
    const token = await issueToken(app, config);
    const started = Date.now();
    const player = await app.inject({
      method: 'GET',
      url: `/player/${FIXTURE_PLAYERS.minikloon.uuid}`,
      headers: bearer(token),
    });
    assert.equal(player.statusCode, 200, player.body);
    assert.equal(player.headers['x-cache'], 'MISS');
    assert.ok(Date.now() - started < 2000, 'no waiting on a lock nobody can hold');

    const burst = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        app.inject({
          method: 'GET',
          url: `/player/${index.toString(16).padStart(32, 'b')}`,
          headers: bearer(token),
        }),
      ),
    );
    assert.ok(fake.callsTo('/v2/player').length <= 5, 'the in-process budget still bounds the calls');
    assert.ok(burst.every((reply) => reply.statusCode === 404 || reply.statusCode === 429));

    const refreshed = await app.inject({ method: 'POST', url: '/auth/refresh', payload: { token } });
    assert.equal(refreshed.statusCode, 200, refreshed.body);
  });
});
