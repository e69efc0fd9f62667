import assert from 'node:assert/strict';
import { it, type TestContext } from 'node:test';
import Fastify from 'fastify';
import { loadConfig } from '../../../src/config.js';
import { migrations } from '../../../src/migrations.js';
import { createDatabase } from '../../../src/platform/db/database.js';
import { renewLease, takeLease } from '../../../src/platform/db/leases.js';
import { migrateToLatest } from '../../../src/platform/db/migrator.js';
import { startPeriodicJob } from '../../../src/platform/db/periodic-job.js';
import { executorOf } from '../../../src/platform/db/transactions.js';
import { loggerOptions } from '../../../src/platform/logger.js';
import { describeOrSkip } from '../../helpers/backends.js';
import { LogCapture } from '../../helpers/build-test-app.js';
import { allDialects, type Dialect, skipOn } from '../../helpers/environment.js';
import { createFakeClock } from '../../helpers/fake-clock.js';
import { openTestDatabase } from '../../helpers/open-database.js';
import { eventually } from '../../helpers/poll.js';
import { createTestDatabase } from '../../helpers/test-database.js';

const HOUR = 3_600_000;
/** When a lease taken for an hourly job ends: a tenth of the period early. */
const LEASE = HOUR * 0.9;

/**
 * `count` instances of one job, each on its own connection to one database, on one fake clock (or on the
 * real one, with `everyMs`).
 */
async function instances(
  t: TestContext,
  dialect: Dialect,
  count: number,
  run: (stop: AbortSignal) => Promise<void>,
  {
    everyMs = HOUR,
    realTime = false,
    longRun = false,
  }: { everyMs?: number; realTime?: boolean; longRun?: boolean } = {},
) {
  const database = await createTestDatabase(dialect);
  const settings = loadConfig({ DATABASE_URL: database.url }).database;
  const clock = createFakeClock(Date.UTC(2026, 0, 1));
  const logs = new LogCapture();
  const log = Fastify({ logger: loggerOptions('trace', logs) }).log;
  const dbs = Array.from({ length: count }, () => createDatabase(settings));
  const [first] = dbs as [(typeof dbs)[0]];
  await migrateToLatest(first, migrations);
  let runs = 0;
  let ended = 0;
  /** Which instance started each run. */
  const runners: number[] = [];
  /** The lease renewals made on the fake clock; `renewed()` waits until they are written. */
  const renewals: Promise<void>[] = [];
  const jobs = dbs.map((db, index) =>
    startPeriodicJob({
      name: 'test-job',
      everyMs,
      firstAfterMs: 0,
      db: executorOf(db),
      log,
      now: realTime ? Date.now : clock.now,
      ...(realTime ? {} : { renewEvery: (ms, renew) => clock.every(ms, () => void renewals.push(renew())) }),
      run: async (stop) => {
        runs++;
        runners.push(index);
        await run(stop).finally(() => ended++);
        return { done: true };
      },
    }),
  );
  t.after(async () => {
    for (const job of jobs) await job.close();
    for (const db of dbs) await db.destroy();
    await database.drop();
  });
  // Let the first attempts that each job makes as it starts settle (the first one takes the lease): each
  // found the lease held, or ran (a long run: is running).
  const notDue = () => logs.lines.filter((line) => line.msg === 'periodic job not due').length;
  await eventually('the first attempts', () => runs + notDue() === count && (longRun || ended === runs), {
    everyMs: 5,
  });
  const attempt = async () => (await Promise.all(jobs.map((job) => job.runOnce()))).filter(Boolean).length;
  const renewed = async () => void (await Promise.all(renewals));
  return { jobs, clock, logs, runs: () => runs, runners: () => runners, renewed, attempt };
}

for (const dialect of allDialects) {
  describeOrSkip(`periodic jobs on ${dialect}`, { skip: skipOn(dialect) }, () => {
    it('runs once per period whatever the number of instances racing for it', async (t) => {
      const { clock, runs, attempt } = await instances(t, dialect, 3, async () => undefined);
      assert.equal(runs(), 1, 'the instances starting together ran it once');
      assert.equal(await attempt(), 0, 'nobody runs it again within the period');
      await clock.advance(LEASE - 1);
      assert.equal(await attempt(), 0, 'not even a millisecond before its lease ends');
      await clock.advance(1);
      assert.equal(await attempt(), 1, 'once the lease is over, exactly one instance runs it');
      for (let period = 0; period < 5; period++) {
        await clock.advance(HOUR);
        assert.equal(await attempt(), 1);
      }
      assert.equal(runs(), 7);
    });

    it('tells a run under way to stop when the job closes, and waits for it: a backlog never holds a shutdown', async (t) => {
      let stopped = false;
      const { jobs, runs } = await instances(
        t,
        dialect,
        1,
        async (stop) => {
          // A run that would go on for a minute, one step after another, unless told to stop.
          for (let step = 0; step < 600 && !stop.aborted; step++)
            await new Promise((resolve) => setTimeout(resolve, 100));
          stopped = stop.aborted;
        },
        { longRun: true },
      );
      assert.equal(runs(), 1);
      await jobs[0]?.close();
      assert.equal(stopped, true, 'the run saw the stop and ended');
    });

    it('runs on an attempt that comes a little before the period is over (an early timer)', async (t) => {
      const { clock, runs, attempt } = await instances(t, dialect, 2, async () => undefined);
      for (let period = 0; period < 5; period++) {
        await clock.advance(HOUR - 1000);
        assert.equal(await attempt(), 1, `period ${period + 2}`);
      }
      assert.equal(runs(), 6);
    });

    it('skips no period on real timers: every attempt of a lone instance runs', async (t) => {
      const { logs, runs } = await instances(t, dialect, 1, async () => undefined, {
        everyMs: 500,
        realTime: true,
      });
      for (let waited = 0; runs() < 6 && waited < 30_000; waited += 50)
        await new Promise((resolve) => setTimeout(resolve, 50));
      assert.ok(runs() >= 6, `${runs()} runs`);
      assert.deepEqual(
        logs.lines.filter((line) => line.msg === 'periodic job not due'),
        [],
        'no attempt found the lease still held',
      );
    });

    it('keeps the lease while a run outlasts it: no other instance starts the job meanwhile', async (t) => {
      let release: () => void = () => undefined;
      const longRun = new Promise<void>((resolve) => {
        release = resolve;
      });
      t.after(() => release());
      // A second run would end at once: the check below then fails instead of waiting on it for good.
      let started = 0;
      const { jobs, clock, runs, runners, renewed } = await instances(
        t,
        dialect,
        2,
        async () => {
          if (++started === 1) await longRun;
        },
        { longRun: true },
      );
      assert.equal(runs(), 1, 'one instance is running it');
      const [runner = 0] = runners();
      const [running, other] = [jobs[runner], jobs[1 - runner]];
      // Three periods go by, a tenth at a time, while the first run goes on (its lease ends at 0.9 of a period
      // unless renewed); both instances try all along. The one running it answers when its run ends; the
      // other must refuse every time.
      for (let tenth = 1; tenth <= 30; tenth++) {
        await clock.advance(HOUR / 10);
        await renewed();
        assert.equal(await other?.runOnce(), false, `${tenth / 10} periods in`);
        assert.equal(await Promise.race([running?.runOnce(), 'running']), 'running');
      }
      release();
      assert.equal(runs(), 1);
    });

    it('logs a failed run, answers no caller with it, and tries again the next period', async (t) => {
      let fail = true;
      const { clock, logs, runs, attempt } = await instances(t, dialect, 2, async () => {
        if (fail) throw new Error('the database went away');
      });
      assert.equal(runs(), 1);
      const failure = logs.lines.find((line) => line.msg === 'periodic job failed');
      assert.equal(failure?.job, 'test-job');
      assert.equal(failure?.level, 'error');
      fail = false;
      await clock.advance(HOUR);
      assert.equal(await attempt(), 1);
      assert.equal(runs(), 2);
      assert.ok(logs.lines.some((line) => line.msg === 'periodic job ran' && line.done === true));
    });

    it('renews a lease only for its holder: one whose time ran out cannot extend who took it next', async (t) => {
      const { db } = await openTestDatabase(t, dialect);
      const executor = executorOf(db);
      const name = 'test-lease';
      assert.ok(await takeLease(executor, { name, holder: 'a', now: 0, expiresAt: 100 }));
      assert.equal(await takeLease(executor, { name, holder: 'b', now: 50, expiresAt: 150 }), false, 'held');
      assert.ok(
        await takeLease(executor, { name, holder: 'b', now: 100, expiresAt: 200 }),
        'a’s time ran out',
      );
      assert.equal(await renewLease(executor, { name, holder: 'a', expiresAt: 10_000 }), false);
      assert.equal(
        await takeLease(executor, { name, holder: 'c', now: 200, expiresAt: 300 }),
        true,
        'b’s end stood',
      );
      assert.ok(await renewLease(executor, { name, holder: 'c', expiresAt: 400 }));
      assert.equal(
        await takeLease(executor, { name, holder: 'a', now: 300, expiresAt: 500 }),
        false,
        'renewed',
      );
    });
  });
}
