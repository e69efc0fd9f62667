import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, it, type TestContext } from 'node:test';
import { parse, stringify } from 'lossless-json';
import { describeEachBackend } from '../../helpers/backends.js';
import { type FakeUpstream, FIXTURE_PLAYERS, startFakeUpstream } from '../../helpers/fake-upstream.js';
import { buildPlayerTestApp } from '../../helpers/player-app.js';
import { fixtureJson } from '../../helpers/player-fixtures.js';
import { issueToken } from '../../helpers/tokens.js';

describeEachBackend('GET /gamemode/profiles/{player}', (backend) => {
  let fake: FakeUpstream;
  before(async () => {
    fake = await startFakeUpstream();
  });
  after(() => fake.close());

  const setup = (t: TestContext, env: Record<string, string> = {}) =>
    buildPlayerTestApp(t, fake, { backend, env, grants: ['profiles:read'] });

  it('serves the SkyBlock profiles as the upstream sent them, then from the cache', async (t) => {
    const { get } = await setup(t);
    fake.addName('SkyBlocker', FIXTURE_PLAYERS.skyblocker.uuid);
    const reply = await get('/gamemode/profiles/SkyBlocker');
    assert.equal(reply.statusCode, 200, reply.body);
    assert.equal(reply.headers['x-cache'], 'MISS');
    assert.match(String(reply.headers['cache-control']), /^private, max-age=(119|120)$/);
    assert.deepEqual(reply.json(), {
      success: true,
      profiles: fixtureJson('skyblock-profiles.json').profiles,
    });
    // Byte for byte: every field in Hypixel's order, those the document types (profile_id, cute_name,
    // members...) and the many it does not, and each number as Hypixel spelt it (`1.848254716341003E7`: a reply
    // holding a number of 16 digits or more is read losslessly, upstream-json.ts), in compact JSON.
    const sent = parse(
      readFileSync(new URL('../../fixtures/hypixel/skyblock-profiles.json', import.meta.url), 'utf8'),
    );
    assert.equal(
      reply.body,
      `{"success":true,"profiles":${stringify((sent as { profiles: unknown }).profiles)}}`,
    );
    assert.equal(
      (await get(`/gamemode/profiles/${FIXTURE_PLAYERS.skyblocker.uuid}`)).headers['x-cache'],
      'HIT',
    );
    assert.equal(fake.callsTo('/v2/skyblock/profiles').length, 1);
  });

  it('gives [] for a player without profiles, 404 for an unknown username, 400 for a bad one', async (t) => {
    const { get } = await setup(t);
    assert.deepEqual((await get(`/gamemode/profiles/${FIXTURE_PLAYERS.minikloon.uuid}`)).json(), {
      success: true,
      profiles: [],
    });
    const unknown = await get('/gamemode/profiles/nobody_here');
    assert.equal(unknown.statusCode, 404);
    assert.deepEqual(unknown.json(), {
      success: false,
      cause: 'No Minecraft player has this username',
      throttle: false,
      profiles: null,
    });
    assert.equal((await get('/gamemode/profiles/not-a-player!')).statusCode, 400);
  });

  it('answers 429 throttle:true when throttled with nothing cached, and waits for the reset before calling again', async (t) => {
    const { get } = await setup(t);
    fake.misbehave({ throttle: {} });
    const throttled = await get(`/gamemode/profiles/${FIXTURE_PLAYERS.skyblocker.uuid}`);
    assert.equal(throttled.statusCode, 429);
    assert.equal(throttled.json().throttle, true);
    assert.ok(Number(throttled.headers['retry-after']) >= 1);
    fake.reset();
    const held = await get(`/gamemode/profiles/${FIXTURE_PLAYERS.minikloon.uuid}`);
    assert.equal(held.statusCode, 429);
    assert.equal(fake.calls.length, 0, 'no request goes out before the upstream reset');
  });

  it('serves the stale copy when the upstream fails', async (t) => {
    const { get } = await setup(t, { CACHE_PROFILES_FRESH_SECONDS: '0' });
    assert.equal((await get(`/gamemode/profiles/${FIXTURE_PLAYERS.minikloon.uuid}`)).statusCode, 200);
    fake.misbehave({ failWith: 502 });
    const stale = await get(`/gamemode/profiles/${FIXTURE_PLAYERS.minikloon.uuid}`);
    assert.equal(stale.statusCode, 200);
    assert.equal(stale.headers['x-cache'], 'STALE');
    assert.deepEqual(stale.json(), { success: true, profiles: [] });
  });

  it('needs a token with profiles:read', async (t) => {
    const { app, config, get } = await setup(t);
    const url = `/gamemode/profiles/${FIXTURE_PLAYERS.minikloon.uuid}`;
    const missing = await app.inject({ method: 'GET', url });
    assert.equal(missing.statusCode, 401);
    assert.equal(missing.json().extra[0].name, 'TOKEN_MISSING');
    const forbidden = await get(url, await issueToken(app, config, { grants: ['player:read'] }));
    assert.equal(forbidden.statusCode, 403);
    assert.equal(forbidden.json().extra[0].name, 'GRANT_MISSING');
    assert.equal(fake.calls.length, 0, 'no upstream call for a refused request');
  });
});
