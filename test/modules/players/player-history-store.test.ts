import assert from 'node:assert/strict';
import { it, type TestContext } from 'node:test';
import { sql } from 'kysely';
import { createPlayerHistoryService } from '../../../src/modules/players/player-history.service.js';
import { executorOf } from '../../../src/platform/db/transactions.js';
import { type Backend, describeEachBackend } from '../../helpers/backends.js';
import { createFakeClock } from '../../helpers/fake-clock.js';
import { openTestDatabase } from '../../helpers/open-database.js';
import { fixtureJson } from '../../helpers/player-fixtures.js';

const UUID = '20934ef9488c465180a78f861586b4cf';
const DAY_MS = 86_400_000;
const NOV_20 = Date.UTC(2026, 10, 20, 12);

/** The history service on a fresh, migrated database of the backend, on a fake clock. */
async function historyOnClock(t: TestContext, backend: Backend, retentionDays = 30) {
  const { db } = await openTestDatabase(t, backend.dialect);
  const clock = createFakeClock(NOV_20);
  const service = createPlayerHistoryService({
    db: executorOf(db),
    settings: { retentionDays },
    uuidOf: async (player) => player,
    now: clock.now,
  });
  const player = structuredClone(fixtureJson('player.json').player) as Record<string, unknown>;
  /** Stores the player with `wins` (and anything else given), fetched a second later than the last. */
  const record = async (wins: number, more: Record<string, unknown> = {}) => {
    await clock.advance(1000);
    return service.record(
      executorOf(db),
      UUID,
      JSON.stringify({ ...player, ...more, wins }),
      clock.now(),
      1n,
    );
  };
  const rows = async () =>
    (
      await sql<{
        seq: number;
        base_seq: number;
        at: number;
      }>`select seq, base_seq, at from player_history order by seq`.execute(db)
    ).rows.map((row) => [Number(row.seq), Number(row.base_seq)]);
  const wins = async (from = 0) =>
    (await service.historyOf(UUID, { fields: ['/wins'], from, to: clock.now() }, 1n)).points.map(
      (point) => point.values[0],
    );
  return { service, clock, db, record, rows, wins };
}

describeEachBackend('player history store', (backend) => {
  it('starts a new full copy in each UTC month, so that a month stands alone', async (t) => {
    const { clock, record, rows, wins } = await historyOnClock(t, backend);
    assert.equal(await record(1), true);
    await clock.advance(DAY_MS);
    assert.equal(await record(2), true);
    assert.equal(await record(2), false, 'equal data stores nothing');
    await clock.advance(15 * DAY_MS); // 6 December
    assert.equal(await record(3), true);
    assert.equal(await record(3), false, 'equal to the latest, across the month');
    assert.deepEqual(await rows(), [
      [1, 1],
      [2, 1],
      [3, 3],
    ]);
    assert.deepEqual(await wins(), [1, 2, 3]);
  });

  it('keeps snapshots in strictly increasing time: fetches in one millisecond, or told of an earlier one', async (t) => {
    const { service, clock, db, wins } = await historyOnClock(t, backend);
    const player = fixtureJson('player.json').player as Record<string, unknown>;
    const at = clock.now();
    for (const [wins, fetchedAt] of [
      [1, at],
      [2, at],
      [3, at - 5000],
    ] as const)
      assert.ok(
        await service.record(executorOf(db), UUID, JSON.stringify({ ...player, wins }), fetchedAt, 1n),
      );
    const times = (
      await sql<{ at: number }>`select at from player_history order by seq`.execute(db)
    ).rows.map((row) => Number(row.at));
    assert.deepEqual(times, [at, at + 1, at + 2]);
    await clock.advance(1000);
    assert.deepEqual(await wins(), [1, 2, 3], 'in the order they were fetched');
  });

  it('keeps changes against one full copy while they are small, and writes a new one when they outweigh it', async (t) => {
    const { record, rows, wins } = await historyOnClock(t, backend);
    for (let count = 0; count < 30; count++) await record(count);
    const fullCopies = async () => (await rows()).filter(([seq, base]) => seq === base).length;
    assert.equal(await fullCopies(), 1, 'thirty small changes: one full copy');
    // Changes as large as the player itself: a full copy costs less than keeping them up.
    const noise = () => Array.from({ length: 3000 }, () => Math.random().toString(36));
    for (let count = 30; count < 34; count++) await record(count, { noise: noise() });
    assert.ok((await fullCopies()) >= 3, `large changes: new full copies (${await fullCopies()})`);
    assert.deepEqual(
      await wins(),
      Array.from({ length: 34 }, (_, index) => index),
    );
  });

  it('keeps the retention in whole months: a month goes once all of its days are past it', async (t) => {
    const { clock, record, rows, service, wins, db } = await historyOnClock(t, backend, 30);
    const postgres = backend.dialect === 'postgres';
    const partitions = async () =>
      postgres
        ? (
            await sql<{
              name: string;
            }>`select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
              where i.inhparent = 'player_history'::regclass order by 1`.execute(db)
          ).rows.map((row) => row.name)
        : [];
    assert.deepEqual(await service.prepareMonths(), [], 'this month and the next two');
    if (postgres) {
      assert.deepEqual(await partitions(), [
        'player_history_default',
        'player_history_m202611',
        'player_history_m202612',
        'player_history_m202701',
      ]);
    }
    await record(1); // 20 November
    await clock.advance(15 * DAY_MS); // 5 December
    await record(2);
    await clock.advance(30 * DAY_MS); // 4 January: 30 days back is 5 December, November is wholly past
    await record(3);
    assert.ok((await service.deleteExpired()) >= 1);
    if (postgres)
      assert.ok(!(await partitions()).includes('player_history_m202611'), "November's partition dropped");
    assert.deepEqual(await rows(), [
      [2, 2],
      [3, 3],
    ]);
    assert.deepEqual(await wins(), [2, 3]);
    await clock.advance(40 * DAY_MS); // 13 February: 30 days back is 14 January, December is past
    await service.deleteExpired();
    assert.deepEqual(await rows(), [[3, 3]], 'January stays while some of its days are within the retention');
    await clock.advance(20 * DAY_MS); // 5 March: 30 days back is 3 February, January is past
    await service.deleteExpired();
    assert.deepEqual(await rows(), [], 'nothing left');
    // March has no partition yet: its rows go to the default one, and March is then left there.
    await record(4);
    assert.deepEqual(await wins(), [4], 'a player whose history is gone starts again from a full copy');
    if (postgres) assert.deepEqual(await service.prepareMonths(), [Date.UTC(2027, 2, 1)]);
  });
});
