import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { FAKE_API_KEY, type FakeUpstream, FIXTURE_PLAYERS, startFakeUpstream } from './fake-upstream.js';

describe('fake upstream', () => {
  let fake: FakeUpstream;
  const get = (path: string, key: string | undefined = FAKE_API_KEY) =>
    fetch(`${fake.url}${path}`, { headers: key ? { 'API-Key': key } : {} });
  before(async () => {
    fake = await startFakeUpstream({ rateLimit: 3 });
  });
  beforeEach(() => fake.reset());
  after(() => fake.close());

  it('serves the fixture players byte for byte, with rate-limit headers, and counts calls', async () => {
    const reply = await get(`/v2/player?uuid=${FIXTURE_PLAYERS.minikloon.uuid}`);
    assert.equal(reply.status, 200);
    assert.equal(reply.headers.get('ratelimit-limit'), '3');
    assert.equal(reply.headers.get('ratelimit-remaining'), '2');
    const body = (await reply.json()) as { player: { displayname: string } };
    assert.equal(body.player.displayname, 'Minikloon');
    assert.equal(fake.callsTo('/v2/player').length, 1);
  });

  it('answers like Hypixel for unknown players, bad keys, malformed UUIDs and an exhausted budget', async () => {
    assert.deepEqual(await (await get('/v2/player?uuid=00000000000000000000000000000000')).json(), {
      success: true,
      player: null,
    });
    assert.deepEqual(
      await (await get('/v2/skyblock/profiles?uuid=00000000000000000000000000000000')).json(),
      {
        success: true,
        profiles: null,
      },
    );
    assert.equal((await get('/v2/player?uuid=x')).status, 422);
    assert.equal((await get('/v2/player?uuid=x', 'wrong')).status, 403);
    const throttled = await get('/v2/player?uuid=00000000000000000000000000000000');
    assert.equal(throttled.status, 429);
    assert.equal(((await throttled.json()) as { throttle: boolean }).throttle, true);
  });

  it('resolves names like Mojang, unknown ones 404', async () => {
    assert.deepEqual(await (await get('/users/profiles/minecraft/MINIKLOON')).json(), {
      id: FIXTURE_PLAYERS.minikloon.uuid,
      name: 'Minikloon',
    });
    assert.equal((await get('/users/profiles/minecraft/nobody_here')).status, 404);
  });

  it('misbehaves on demand: throttle, outage, garbage, delay', async () => {
    fake.misbehave({ throttle: { global: true } });
    assert.deepEqual(await (await get(`/v2/player?uuid=${FIXTURE_PLAYERS.minikloon.uuid}`)).json(), {
      success: false,
      cause: 'Key throttle',
      throttle: true,
      global: true,
    });
    fake.reset();
    fake.misbehave({ failWith: 502 });
    const down = await get('/v2/player?uuid=x');
    assert.equal(down.status, 502);
    assert.match(await down.text(), /<html>/i);
    fake.reset();
    fake.misbehave({ garbage: true });
    const garbage = await get(`/v2/player?uuid=${FIXTURE_PLAYERS.minikloon.uuid}`);
    assert.equal(garbage.status, 200);
    const text = await garbage.text();
    assert.match(text, /^<html>/);
    assert.throws(() => JSON.parse(text), SyntaxError);
    fake.reset();
    fake.misbehave({ delayMs: 150 });
    const started = Date.now();
    await (await get('/users/profiles/minecraft/Minikloon')).text();
    assert.ok(Date.now() - started >= 140);
  });
});

describe('fake upstream answering any player', () => {
  it('answers a UUID without a fixture with a copy of the template, its uuid swapped', async () => {
    const template = Buffer.from(
      JSON.stringify({
        success: true,
        player: { uuid: FIXTURE_PLAYERS.minikloon.uuid, displayname: 'Copy' },
      }),
    );
    const fake = await startFakeUpstream({ anyPlayer: template });
    try {
      const get = async (uuid: string) =>
        (await (
          await fetch(`${fake.url}/v2/player?uuid=${uuid}`, { headers: { 'API-Key': FAKE_API_KEY } })
        ).json()) as { player: { uuid: string; displayname: string } };
      const uuid = 'cafe0000000000000000000000000001';
      assert.deepEqual(await get(uuid), { success: true, player: { uuid, displayname: 'Copy' } });
      // The fixtures are still served as they are.
      assert.equal((await get(FIXTURE_PLAYERS.builder.uuid)).player.displayname, 'builder_247');
    } finally {
      await fake.close();
    }
  });
});
