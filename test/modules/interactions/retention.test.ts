import assert from 'node:assert/strict';
import { it } from 'node:test';
import Fastify from 'fastify';
import { sql } from 'kysely';
import { loadConfig } from '../../../src/config.js';
import { migrations } from '../../../src/migrations.js';
import { createInteractionsModule } from '../../../src/modules/interactions/interactions.module.js';
import {
  createInteractionsService,
  type InteractionLog,
} from '../../../src/modules/interactions/interactions.service.js';
import { createDatabase } from '../../../src/platform/db/database.js';
import { migrateToLatest } from '../../../src/platform/db/migrator.js';
import { executorOf } from '../../../src/platform/db/transactions.js';
import { loggerOptions } from '../../../src/platform/logger.js';
import { describeOrSkip } from '../../helpers/backends.js';
import { LogCapture } from '../../helpers/build-test-app.js';
import { allDialects, skipOn } from '../../helpers/environment.js';
import { createTestDatabase } from '../../helpers/test-database.js';

const DAY = 86_400_000;
const RETENTION_DAYS = 90;
const settings = {
  retentionDays: RETENTION_DAYS,
  // The first attempt comes after the period (when shorter than a minute).
  retentionJobEveryMs: 300,
  groupCommit: { maxBatch: 256, lingerMs: 0, maxQueue: 10_000 },
};

const log = (index: number): InteractionLog => ({
  interaction: {
    interaction_name: 'stats',
    interaction_token: `token-${index}`,
    interaction_type: 'APPLICATION_COMMAND',
    user_id: 100n + BigInt(index % 7),
  },
  user: { user_id: 100n + BigInt(index % 7), username: `user${index % 7}` },
});

for (const dialect of allDialects) {
  describeOrSkip(`interaction log retention on ${dialect}`, { skip: skipOn(dialect) }, () => {
    it('deletes the logs older than the retention, once, whichever of several instances runs it', async (t) => {
      const database = await createTestDatabase(dialect);
      const dbSettings = loadConfig({ DATABASE_URL: database.url }).database;
      const dbs = Array.from({ length: 3 }, () => createDatabase(dbSettings));
      t.after(async () => {
        for (const db of dbs) await db.destroy();
        await database.drop();
      });
      const [first] = dbs as [(typeof dbs)[0]];
      await migrateToLatest(first, migrations);

      // 2300 logs from beyond the retention (more than two of the job's delete batches), 40 from within.
      const fingerprintKey = Buffer.alloc(32, 7);
      const now = Date.now();
      const writeAt = async (at: number, from: number, count: number) => {
        const service = createInteractionsService({
          db: executorOf(first),
          fingerprintKey,
          settings,
          now: () => at,
        });
        await Promise.all(Array.from({ length: count }, (_, index) => service.log(1n, log(from + index))));
        await service.close();
      };
      await writeAt(now - (RETENTION_DAYS + 1) * DAY, 0, 2300);
      await writeAt(now - (RETENTION_DAYS - 1) * DAY, 2300, 40);

      const logs = new LogCapture();
      const modules = dbs.map((db) =>
        createInteractionsModule({
          db: executorOf(db),
          fingerprintKey,
          settings,
          log: Fastify({ logger: loggerOptions('info', logs) }).log,
        }),
      );
      // Each instance runs the job as it starts; wait for all of them to have tried.
      for (const module of modules) module.start?.();
      for (let waited = 0; logs.lines.length === 0 && waited < 10_000; waited += 50)
        await new Promise((resolve) => setTimeout(resolve, 50));
      await Promise.all(modules.map((module) => module.close?.()));

      // Later periods may have run too, deleting nothing more.
      const runs = logs.lines.filter((line) => line.msg === 'periodic job ran');
      assert.ok(runs.every((run) => run.job === 'interaction-log-retention'));
      assert.deepEqual(
        runs.map((run) => run.deleted),
        [2300, ...Array(runs.length - 1).fill(0)],
        'one instance deleted them',
      );
      assert.ok(runs.length <= 2, `one run per period: ${runs.length} runs in about one period`);
      const count = async (query: string) =>
        Number((await sql<{ count: number }>`${sql.raw(query)}`.execute(first)).rows[0]?.count);
      assert.equal(await count('select count(*) as count from interaction_logs'), 40);
      assert.equal(
        await count(
          `select count(*) as count from interaction_logs where received_at < ${now - RETENTION_DAYS * DAY}`,
        ),
        0,
      );
      assert.equal(await count('select count(*) as count from interaction_users'), 7, 'the users stay');
    });
  });
}
