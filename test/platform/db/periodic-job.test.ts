import assert from 'node:assert/strict';
import { it, type TestContext } from 'node:test';
import Fastify from 'fastify';
import { loadConfig } from '../../../src/config.js';
import { migrations } from '../../../src/migrations.js';
import { createDatabase } from '../../../src/platform/db/database.js';
import { migrateToLatest } from '../../../src/platform/db/migrator.js';
import { startPeriodicJob } from '../../../src/platform/db/periodic-job.js';
import { executorOf } from '../../../src/platform/db/transactions.js';
import { loggerOptions } from '../../../src/platform/logger.js';
import { describeOrSkip } from '../../helpers/backends.js';
import { LogCapture } from '../../helpers/build-test-app.js';
import { allDialects, type Dialect, skipOn } from '../../helpers/environment.js';
import { createFakeClock } from '../../helpers/fake-clock.js';
import { createTestDatabase } from '../../helpers/test-database.js';

const HOUR = 3_600_000;

/** `count` instances of one job, each on its own connection to one database, on one fake clock. */
async function instances(t: TestContext, dialect: Dialect, count: number, run: () => Promise<void>) {
  const database = await createTestDatabase(dialect);
  const settings = loadConfig({ DATABASE_URL: database.url }).database;
  const clock = createFakeClock(Date.UTC(2026, 0, 1));
  const logs = new LogCapture();
  const log = Fastify({ logger: loggerOptions('trace', logs) }).log;
  const dbs = Array.from({ length: count }, () => createDatabase(settings));
  const [first] = dbs as [(typeof dbs)[0]];
  await migrateToLatest(first, migrations);
  let runs = 0;
  const jobs = dbs.map((db) =>
    startPeriodicJob({
      name: 'test-job',
      everyMs: HOUR,
      firstAfterMs: 0,
      db: executorOf(db),
      log,
      now: clock.now,
      run: async () => {
        runs++;
        await run();
        return { done: true };
      },
    }),
  );
  t.after(async () => {
    for (const job of jobs) await job.close();
    for (const db of dbs) await db.destroy();
    await database.drop();
  });
  // Let the first attempts that each job makes as it starts settle (the first one takes the lease).
  await new Promise((resolve) => setTimeout(resolve, 200));
  const attempt = async () => (await Promise.all(jobs.map((job) => job.runOnce()))).filter(Boolean).length;
  return { jobs, clock, logs, runs: () => runs, attempt };
}

for (const dialect of allDialects) {
  describeOrSkip(`periodic jobs on ${dialect}`, { skip: skipOn(dialect) }, () => {
    it('runs once per period whatever the number of instances racing for it', async (t) => {
      const { clock, runs, attempt } = await instances(t, dialect, 3, async () => undefined);
      assert.equal(runs(), 1, 'the instances starting together ran it once');
      assert.equal(await attempt(), 0, 'nobody runs it again within the period');
      await clock.advance(HOUR - 1);
      assert.equal(await attempt(), 0, 'not even a millisecond before its end');
      await clock.advance(1);
      assert.equal(await attempt(), 1, 'once the period is over, exactly one instance runs it');
      for (let period = 0; period < 5; period++) {
        await clock.advance(HOUR);
        assert.equal(await attempt(), 1);
      }
      assert.equal(runs(), 7);
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
  });
}
