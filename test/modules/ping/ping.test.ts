import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { describeEachBackend } from '../../helpers/backends.js';
import { type FakeUpstream, FIXTURE_PLAYERS, startFakeUpstream } from '../../helpers/fake-upstream.js';
import { expectedDays, type SentSample, setupPing } from './ping-app.js';

const PLAYER = FIXTURE_PLAYERS.minikloon.uuid;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Midnight UTC of the day `days` ago. */
const midnight = (daysAgo: number) => {
  const today = new Date();
  return Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate()) - daysAgo * DAY;
};

/** A deterministic stream of pings (no Math.random: a failure replays). */
function pings(seed: number) {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state % 400;
  };
}

describeEachBackend('ping history (endpoint 6)', (backend) => {
  let fake: FakeUpstream;
  before(async () => {
    fake = await startFakeUpstream();
  });
  after(() => fake.close());

  it('keeps per-day statistics that match the samples: days cut at UTC midnight, newest first', async (t) => {
    const { post, days } = await setupPing(t, fake, backend);
    const next = pings(7);
    const sent: SentSample[] = [];
    // Three days, with samples on both sides of each midnight, sent in two batches out of time order.
    for (const base of [midnight(2), midnight(1), midnight(0)]) {
      for (const offset of [-1, 0, 1, 37 * 60_000, 5 * HOUR + 123, 23 * HOUR]) {
        const at = base + offset;
        if (at <= Date.now()) sent.push({ ping: next(), lobby: `lobby_${sent.length % 4}`, at });
      }
    }
    const firstHalf = sent.filter((_, index) => index % 2 === 1);
    const secondHalf = sent.filter((_, index) => index % 2 === 0);
    for (const batch of [firstHalf, secondHalf]) {
      const reply = await post(PLAYER, batch);
      assert.equal(reply.statusCode, 200, reply.body);
      assert.deepEqual(reply.json(), { player: PLAYER, stored: batch.length, duplicates: 0 });
    }
    const shown = await days(PLAYER);
    assert.deepEqual(shown, expectedDays([...firstHalf, ...secondHalf], 1440));
    assert.equal(shown.length, 4, 'three midnights crossed: four days');
    for (const record of shown)
      assert.deepEqual(Object.keys(record).sort(), [
        'avg',
        'date',
        'history',
        'last_lobby',
        'last_ping',
        'max',
        'min',
      ]);
  });

  it('puts a late sample in its place in the history and keeps the later one as the last', async (t) => {
    const { post, days } = await setupPing(t, fake, backend);
    const noon = midnight(1) + 12 * HOUR;
    const sent: SentSample[] = [
      { ping: 50, lobby: 'noon', at: noon },
      { ping: 10, lobby: 'morning', at: noon - 2 * HOUR },
      { ping: 30, lobby: 'late-morning', at: noon - HOUR },
      { ping: 70, lobby: 'same-time-later', at: noon },
    ];
    for (const sample of sent) assert.equal((await post(PLAYER, [sample])).statusCode, 200);
    const [day] = await days(PLAYER);
    assert.deepEqual(day?.history, [10, 30, 50, 70]);
    assert.equal(day?.last_lobby, 'same-time-later', 'of equal times, the one that came last');
    assert.equal(day?.last_ping, new Date(noon).toISOString());
    assert.equal(day?.avg, 40);
    assert.deepEqual(await days(PLAYER), expectedDays(sent, 1440));
  });

  it('caps the history at the latest values while the statistics cover every sample', async (t) => {
    const { post, days } = await setupPing(t, fake, backend, { PING_HISTORY_PER_DAY: '5' });
    const start = midnight(1) + HOUR;
    const sent: SentSample[] = Array.from({ length: 8 }, (_, index) => ({
      ping: 100 + index,
      lobby: 'l',
      at: start + index * 60_000,
    }));
    assert.equal((await post(PLAYER, sent)).statusCode, 200);
    // A late sample older than all the history keeps: counted, not shown. One in the middle: shown.
    const early = { ping: 1, lobby: 'early', at: start - 60_000 };
    const middle = { ping: 2, lobby: 'middle', at: start + 5.5 * 60_000 };
    assert.equal((await post(PLAYER, [early, middle])).statusCode, 200);
    const [day] = await days(PLAYER);
    assert.deepEqual(day?.history, [104, 105, 2, 106, 107]);
    assert.equal(day?.min, 1, 'the dropped sample still counts');
    assert.deepEqual(await days(PLAYER), expectedDays([...sent, early, middle], 5));
  });

  it('answers a player with no samples with an empty list, and a username as its UUID', async (t) => {
    const { post, days, get } = await setupPing(t, fake, backend);
    assert.deepEqual(await days(PLAYER), []);
    const sample = { ping: 42, lobby: 'main', at: Date.now() - 1000 };
    const reply = await post(FIXTURE_PLAYERS.minikloon.name, [sample]);
    assert.equal(reply.statusCode, 200, reply.body);
    assert.equal(reply.json().player, PLAYER);
    assert.deepEqual(await days('MINIKLOON'), expectedDays([sample], 1440));
    const dashed = PLAYER.replace(/^(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-').toUpperCase();
    assert.deepEqual(await days(dashed), expectedDays([sample], 1440));
    const unknown = await get('/ping/NoSuchPlayer42');
    assert.equal(unknown.statusCode, 404, unknown.body);
    assert.equal(unknown.json().extra[0].name, 'PLAYER_NOT_FOUND');
  });

  it('filters by day and limits the number of days', async (t) => {
    const { post, days, get } = await setupPing(t, fake, backend);
    const sent = [5, 4, 3, 2, 1].map((ago) => ({ ping: ago, lobby: 'l', at: midnight(ago) + HOUR }));
    assert.equal((await post(PLAYER, sent)).statusCode, 200);
    const date = (ago: number) => new Date(midnight(ago)).toISOString().slice(0, 10);
    assert.deepEqual(
      (await days(PLAYER, `from=${date(4)}&to=${date(2)}`)).map((day) => day.date),
      [date(2), date(3), date(4)],
    );
    assert.deepEqual(
      (await days(PLAYER, 'limit=2')).map((day) => day.date),
      [date(1), date(2)],
    );
    assert.deepEqual(await days(PLAYER, `from=${date(0)}`), []);
    for (const query of [
      'from=2026-02-30',
      'to=yesterday',
      'limit=0',
      'limit=x',
      'from=2026-1-1',
      'other=1',
    ]) {
      const reply = await get(`/ping/${PLAYER}?${query}`);
      assert.equal(reply.statusCode, 400, `${query}: ${reply.body}`);
    }
  });
});
