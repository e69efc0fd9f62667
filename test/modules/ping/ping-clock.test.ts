import assert from 'node:assert/strict';
import { it, type TestContext } from 'node:test';
import type { SampleInput } from '../../../src/modules/ping/ping.service.js';
import { AppError, MAX_PROBLEMS } from '../../../src/platform/errors.js';
import { inBody } from '../../../src/platform/http/input-errors.js';
import { type Backend, describeEachBackend } from '../../helpers/backends.js';
import { pingServiceOnClock } from './ping-app.js';

const PLAYER = '20934ef9488c465180a78f861586b4cf';
const OWNER = 123456789012345678n;
const SECOND = 1000;
/** Noon UTC: a minute either way stays on the day. */
const NOON = Date.UTC(2026, 10, 22, 12);

/**
 * The ping service on a fresh, migrated database of the backend, on a fake clock, with the default
 * settings; players are given as UUIDs, so resolving one needs no upstream.
 */
async function pingOnClock(t: TestContext, backend: Backend) {
  const { service, clock, settings } = await pingServiceOnClock(t, backend, { start: NOON });
  const last = async () => {
    const [day] = (await service.history(PLAYER, {}, OWNER)).days;
    return { at: day?.lastAt, lobby: day?.lastLobby };
  };
  /**
   * The developer reasons of the 400 the ingestion of `samples` must be refused with: the service's error
   * about its input as the route answers it, the input being the request's body.
   */
  const refused = async (samples: readonly SampleInput[]): Promise<string[]> => {
    const error = await service
      .ingest(PLAYER, samples, OWNER)
      .catch(inBody)
      .then(
        () => assert.fail('the batch was taken'),
        (error: unknown) => error,
      );
    assert.ok(error instanceof AppError, String(error));
    assert.equal(error.status, 400);
    return error.problems.map((problem) => problem.developerReason);
  };
  return { service, clock, settings, last, refused };
}

const AHEAD = 'must be at most 60 seconds after the request was received';

describeEachBackend('ping sample times against the clock', (backend) => {
  it('takes a sample 60 s ahead of when the batch was received, and refuses one 61 s (or 60.001 s) ahead', async (t) => {
    const { service, clock, settings, last, refused } = await pingOnClock(t, backend);
    assert.equal(settings.maxFutureMs, 60 * SECOND, 'PING_MAX_FUTURE_SECONDS defaults to 60');
    const now = clock.now();
    const taken = await service.ingest(PLAYER, [{ ping: 1, lobby: 'edge', at: now + 60 * SECOND }], OWNER);
    assert.deepEqual(taken, { uuid: PLAYER, stored: 1, duplicates: 0 });
    const good = { ping: 2, lobby: 'good', at: now };
    assert.deepEqual(await refused([good, { ping: 3, lobby: 'over', at: now + 61 * SECOND }, good]), [
      `body/samples/1/at ${AHEAD}`,
    ]);
    assert.deepEqual(await refused([{ ping: 3, lobby: 'over', at: now + 60 * SECOND + 1 }]), [
      `body/samples/0/at ${AHEAD}`,
    ]);
    // Nothing of a refused batch is stored: its good sample is not there.
    const [day] = (await service.history(PLAYER, {}, OWNER)).days;
    assert.equal(day?.historyJson, '[1]');
    assert.deepEqual(await last(), { at: now + 60 * SECOND, lobby: 'edge' });
  });

  it('takes a sample at the retention’s edge to the millisecond, and refuses one a millisecond older', async (t) => {
    const { service, clock, settings, refused } = await pingOnClock(t, backend);
    const earliest = clock.now() - settings.retentionDays * 24 * 3600 * SECOND;
    const taken = await service.ingest(PLAYER, [{ ping: 1, lobby: 'edge', at: earliest }], OWNER);
    assert.deepEqual(taken, { uuid: PLAYER, stored: 1, duplicates: 0 });
    assert.deepEqual(await refused([{ ping: 2, lobby: 'older', at: earliest - 1 }]), [
      `body/samples/0/at must be within the last ${settings.retentionDays} days (the retention)`,
    ]);
  });

  it('moves the player’s revision with every write, the clock standing still', async (t) => {
    const { service } = await pingOnClock(t, backend);
    const history = () => service.history(PLAYER, {}, OWNER);
    await service.ingest(PLAYER, [{ ping: 1, lobby: 'a' }], OWNER);
    const first = await history();
    // The same millisecond: a revision of its own all the same, and the days read again.
    await service.ingest(PLAYER, [{ ping: 2, lobby: 'b' }], OWNER);
    const second = await history();
    assert.ok(second.revision > first.revision, `${second.revision} after ${first.revision}`);
    assert.equal(second.days[0]?.historyJson, '[1,2]');
    await service.ingest(PLAYER, [{ ping: 3, lobby: 'c' }], OWNER);
    const third = await history();
    assert.ok(third.revision > second.revision);
    assert.equal(third.days[0]?.historyJson, '[1,2,3]');
  });

  it('lets an honest sample take the last place from one stamped ahead, once the clock has passed it', async (t) => {
    const { service, clock, last } = await pingOnClock(t, backend);
    const forgedAt = clock.now() + 60 * SECOND;
    await service.ingest(PLAYER, [{ ping: 1, lobby: 'forged', at: forgedAt }], OWNER);
    // Honest samples up to now are earlier: the forged one stays the last, as the latest by time.
    await service.ingest(PLAYER, [{ ping: 40, lobby: 'honest', at: clock.now() }], OWNER);
    await service.ingest(PLAYER, [{ ping: 41, lobby: 'honest-untimed' }], OWNER);
    assert.deepEqual(await last(), { at: forgedAt, lobby: 'forged' });
    // The clock moves past it: an honest sample stamped now (or left to be stamped now) replaces it.
    await clock.advance(61 * SECOND);
    await service.ingest(PLAYER, [{ ping: 42, lobby: 'honest-later', at: clock.now() }], OWNER);
    assert.deepEqual(await last(), { at: clock.now(), lobby: 'honest-later' });
    await clock.advance(SECOND);
    await service.ingest(PLAYER, [{ ping: 43, lobby: 'honest-now' }], OWNER);
    assert.deepEqual(await last(), { at: clock.now(), lobby: 'honest-now' });
    const [day] = (await service.history(PLAYER, {}, OWNER)).days;
    assert.equal(day?.historyJson, '[40,41,1,42,43]');
  });

  it('stops looking at the samples’ times once it has found MAX_PROBLEMS bad ones', async (t) => {
    const { clock, refused } = await pingOnClock(t, backend);
    let read = 0;
    const ahead = clock.now() + 3600 * SECOND;
    // A batch of 1000 samples, every one an hour ahead, that counts how many of its times are read.
    const samples = Array.from({ length: 1000 }, (_, index) => ({
      ping: index,
      lobby: 'ahead',
      get at() {
        read++;
        return ahead;
      },
    }));
    const reasons = await refused(samples);
    assert.equal(MAX_PROBLEMS, 20);
    assert.deepEqual(
      reasons,
      Array.from({ length: MAX_PROBLEMS }, (_, index) => `body/samples/${index}/at ${AHEAD}`),
    );
    assert.equal(read, MAX_PROBLEMS, 'the 980 samples after the 20th bad one are not looked at');
  });
});
