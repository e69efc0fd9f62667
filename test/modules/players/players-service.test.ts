import assert from 'node:assert/strict';
import { after, before, describe, it, type TestContext } from 'node:test';
import Fastify from 'fastify';
import { createInfrastructure } from '../../../src/infrastructure.js';
import { migrations } from '../../../src/migrations.js';
import { createPlayersModule } from '../../../src/modules/players/players.module.js';
import type { PlayersService } from '../../../src/modules/players/players.service.js';
import { createProfilesModule } from '../../../src/modules/profiles/profiles.module.js';
import { migrateToLatest } from '../../../src/platform/db/migrator.js';
import { executorOf } from '../../../src/platform/db/transactions.js';
import { AppError } from '../../../src/platform/errors.js';
import { LongInteger } from '../../../src/platform/json.js';
import { UpstreamFailure } from '../../../src/upstream/upstream-failure.js';
import { deferClose, testConfig } from '../../helpers/build-test-app.js';
import { type FakeUpstream, FIXTURE_PLAYERS, startFakeUpstream } from '../../helpers/fake-upstream.js';
import { fixtureJson } from '../../helpers/player-fixtures.js';

const { minikloon, skyblocker } = FIXTURE_PLAYERS;

/**
 * The players and profiles services as another module gets them: over the shared parts (one database,
 * cache and upstream budget), with no HTTP in between.
 */
async function services(t: TestContext, fake: FakeUpstream, env: Record<string, string> = {}) {
  fake.reset();
  const config = await testConfig(t, { upstream: fake, env });
  const shared = await createInfrastructure(config, Fastify().log);
  deferClose(t, () => shared.close());
  await migrateToLatest(shared.db, migrations);
  const { caching, upstreams, log } = shared;
  const db = executorOf(shared.db);
  const players = createPlayersModule({
    db,
    caching,
    upstreams,
    settings: config.cache,
    history: config.history,
    log,
  }).service;
  const profiles = createProfilesModule({ caching, upstreams, players, settings: config.cache }).service;
  return { players, profiles };
}

async function found(players: PlayersService, player: string) {
  const lookup = await players.lookup(player);
  assert.equal(lookup.kind, 'found');
  return lookup.player;
}

describe('the player domain API (for other modules)', () => {
  let fake: FakeUpstream;
  before(async () => {
    fake = await startFakeUpstream();
  });
  after(() => fake.close());

  it('resolves a UUID (dashed, any case) without asking anyone, and a username through Mojang once', async (t) => {
    const { players } = await services(t, fake);
    assert.deepEqual(await players.resolve('20934EF9-488C-4651-80A7-8F861586B4CF'), { uuid: minikloon.uuid });
    assert.deepEqual(await players.resolve('MiniKloon'), { uuid: minikloon.uuid });
    assert.deepEqual(await players.resolve('minikloon'), { uuid: minikloon.uuid });
    assert.equal(fake.callsTo('/users/profiles/minecraft/').length, 1);
    const unknown = await players.resolve('nobody_here');
    assert.ok('unknown' in unknown);
    assert.equal(unknown.unknown.status, 'MISS');
    assert.equal(fake.calls.length, 2, 'no Hypixel call to resolve a name');
  });

  it('refuses what is neither a UUID nor a username', async (t) => {
    const { players } = await services(t, fake);
    for (const bad of ['', 'bad!name', 'a_name_far_too_long', `${minikloon.uuid}0`]) {
      await assert.rejects(players.resolve(bad), (error: unknown) => {
        assert.ok(error instanceof AppError, bad);
        assert.equal(error.problems[0]?.kind.name, 'INVALID_FIELD');
        return true;
      });
    }
    assert.equal(fake.calls.length, 0);
  });

  it('gives a snapshot: the exact player object, typed accessors, and where the copy came from', async (t) => {
    const { players } = await services(t, fake);
    const player = await found(players, 'Minikloon');
    assert.equal(player.uuid, minikloon.uuid);
    assert.equal(player.freshness.status, 'MISS');
    assert.equal(player.displayName(), 'Minikloon');
    assert.equal(player.discordLink(), 'Minikloon#0001');
    assert.deepEqual(JSON.parse(player.json.toString()), fixtureJson('player.json').player);
    // Integers beyond 2^53 keep their digits: in the bytes, and in the parsed object.
    assert.match(player.json.toString(), /"remainingTicks":9223372036854775807/);
    const pit = player.data().stats as { Pit: { profile: { bounties: { remainingTicks: unknown }[] } } };
    assert.deepEqual(pit.Pit.profile.bounties[0]?.remainingTicks, new LongInteger('9223372036854775807'));

    const again = await found(players, minikloon.uuid);
    assert.equal(again.freshness.status, 'HIT');
    assert.equal(again.body, player.body, 'a hit is the cached bytes, not a copy');
    assert.equal(fake.callsTo('/v2/player').length, 1);
  });

  it('says when a UUID never joined, and throws an UpstreamFailure when nothing can stand in', async (t) => {
    const { players } = await services(t, fake, { UPSTREAM_RETRIES: '0' });
    const never = await players.lookup('00000000000000000000000000000000');
    assert.equal(never.kind, 'never_joined');
    fake.misbehave({ failWith: 503 });
    await assert.rejects(players.lookup(FIXTURE_PLAYERS.builder.uuid), (error: unknown) => {
      assert.ok(error instanceof UpstreamFailure);
      assert.equal(error.kind, 'bad_gateway');
      return true;
    });
  });

  it('has no discord link for a player who set none', async (t) => {
    const { players } = await services(t, fake);
    fake.misbehave({
      answerWith: { status: 200, body: JSON.stringify({ success: true, player: { displayname: 'Plain' } }) },
    });
    const player = await found(players, minikloon.uuid);
    assert.equal(player.discordLink(), undefined);
    assert.equal(player.displayName(), 'Plain');
  });

  it('serves profiles on top of the players service: one name lookup for both', async (t) => {
    const { players, profiles } = await services(t, fake);
    fake.addName('SkyBlocker', skyblocker.uuid);
    const lookup = await profiles.lookup('SkyBlocker');
    assert.equal(lookup.kind, 'found');
    if (lookup.kind === 'found') {
      assert.deepEqual(
        JSON.parse(lookup.profiles.json.toString()),
        fixtureJson('skyblock-profiles.json').profiles,
      );
    }
    assert.deepEqual(await players.resolve('skyblocker'), { uuid: skyblocker.uuid });
    assert.equal(fake.callsTo('/users/profiles/minecraft/').length, 1);
  });

  it('spends one upstream budget for players and profiles together', async (t) => {
    const limited = await startFakeUpstream({ rateLimit: 5, rateLimitWindowSeconds: 60 });
    t.after(() => limited.close());
    const { players, profiles } = await services(t, limited);
    const uuids = Array.from({ length: 20 }, (_, index) => index.toString(16).padStart(32, 'c'));
    const outcomes = await Promise.allSettled(
      uuids.map((uuid, index) => (index % 2 === 0 ? players.lookup(uuid) : profiles.lookup(uuid))),
    );
    const calls = limited.callsTo('/v2/').length;
    assert.ok(calls <= 5, `${calls} calls to a key that allows 5`);
    assert.equal(outcomes.filter((outcome) => outcome.status === 'fulfilled').length, calls);
    for (const outcome of outcomes.filter((candidate) => candidate.status === 'rejected')) {
      assert.ok(outcome.reason instanceof UpstreamFailure && outcome.reason.kind === 'throttled');
    }
  });
});
