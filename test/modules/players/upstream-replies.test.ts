import assert from 'node:assert/strict';
import { after, before, describe, it, type TestContext } from 'node:test';
import { type FakeUpstream, FIXTURE_PLAYERS, startFakeUpstream } from '../../helpers/fake-upstream.js';
import { buildPlayerTestApp } from '../../helpers/player-app.js';

/** Each lookup of a stale copy waits for its call, however slow a loaded machine makes it (no 1 s deadline). */
const WAIT_FOR_CALLS = '60000';

describe('odd upstream replies', () => {
  let fake: FakeUpstream;
  before(async () => {
    fake = await startFakeUpstream();
  });
  after(() => fake.close());

  const setup = (t: TestContext, env: Record<string, string> = {}) =>
    buildPlayerTestApp(t, fake, { env: { UPSTREAM_RETRIES: '0', ...env } });

  it('treats JSON of the wrong shape as a 502, not a crash', async (t) => {
    const { get } = await setup(t);
    for (const body of [
      '{"success":true}',
      '{"success":true,"player":[1,2]}',
      '[]',
      '{"success":false,"cause":"?"}',
    ]) {
      fake.misbehave({ answerWith: { status: 200, body } });
      const reply = await get(`/player/${FIXTURE_PLAYERS.builder.uuid}`);
      assert.equal(reply.statusCode, 502, body);
      assert.equal(reply.json().cause, 'hypixel answered in an unexpected shape');
    }
  });

  it("takes an older Mojang server's 204 for an unknown name", async (t) => {
    const { get } = await setup(t);
    fake.misbehave({ answerWith: { status: 204, body: '' } });
    const reply = await get('/player/Someone');
    assert.equal(reply.statusCode, 404);
    assert.equal(reply.json().cause, 'No Minecraft player has this username');
  });

  it('resolves a name it has seen when Mojang is down', async (t) => {
    const { get } = await setup(t);
    // Fetched by UUID: the service records the name Hypixel gives, without asking Mojang.
    assert.equal((await get(`/player/${FIXTURE_PLAYERS.minikloon.uuid}`)).statusCode, 200);
    assert.equal(fake.callsTo('/users/').length, 0);
    fake.misbehave({ failWith: 503 });
    const reply = await get('/player/minikloon');
    assert.equal(reply.statusCode, 200, reply.body);
    assert.equal(reply.headers['x-cache'], 'HIT');
    assert.equal(fake.callsTo('/users/').length, 1, 'Mojang was asked, and failed');
  });

  it('counts stale answers, upstream outcomes and the budget left in /metrics', async (t) => {
    const { app, get } = await setup(t, {
      CACHE_PLAYER_FRESH_SECONDS: '0',
      CACHE_STALE_DEADLINE_MS: WAIT_FOR_CALLS,
    });
    await get(`/player/${FIXTURE_PLAYERS.minikloon.uuid}`);
    fake.misbehave({ failWith: 503 });
    assert.equal((await get(`/player/${FIXTURE_PLAYERS.minikloon.uuid}`)).headers['x-cache'], 'STALE');
    const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    assert.match(metrics, /cache_lookups_total\{resource="player",result="miss"\} 1/);
    assert.match(metrics, /cache_lookups_total\{resource="player",result="stale"\} 1/);
    assert.match(
      metrics,
      /upstream_requests_total\{upstream="hypixel",endpoint="player",outcome="server_error"\} 1/,
    );
    assert.match(metrics, /upstream_budget_remaining\{upstream="hypixel"\} \d+/);
    assert.match(
      metrics,
      /upstream_request_duration_seconds_count\{upstream="hypixel",endpoint="player"\} 2/,
    );
  });
});
