import assert from 'node:assert/strict';
import { it, type TestContext } from 'node:test';
import { sql } from 'kysely';
import { loadConfig } from '../../../src/config.js';
import { createDatabase } from '../../../src/platform/db/database.js';
import { createGroupCommitter, type GroupCommitSettings } from '../../../src/platform/db/group-commit.js';
import { databaseOf, type Executor, executorOf } from '../../../src/platform/db/transactions.js';
import { AppError } from '../../../src/platform/errors.js';
import { describeOrSkip } from '../../helpers/backends.js';
import { allDialects, type Dialect, skipOn } from '../../helpers/environment.js';
import { createTestDatabase } from '../../helpers/test-database.js';

/** A gate a batch's write waits at until the test opens it. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

async function setup(
  t: TestContext,
  dialect: Dialect,
  settings: Partial<GroupCommitSettings> = {},
  weightOf?: (id: number) => number,
) {
  const database = await createTestDatabase(dialect);
  const db = createDatabase(loadConfig({ DATABASE_URL: database.url }).database);
  t.after(async () => {
    await db.destroy();
    await database.drop();
  });
  await sql`create table items (id integer primary key, value text not null)`.execute(db);
  const batches: { size: number; committed: boolean }[] = [];
  let refusals = 0;
  /** Called inside each batch's transaction, before its rows are written; a test may hold it there. */
  let before: (ids: readonly number[]) => Promise<void> = async () => undefined;
  const committer = createGroupCommitter<number, string>(
    executorOf(db),
    async (transaction: Executor, ids) => {
      await before(ids);
      const inserted = databaseOf(transaction);
      for (const id of ids)
        await sql`insert into items (id, value) values (${id}, ${`item ${id}`})`.execute(inserted);
      return ids.map((id) => `stored ${id}`);
    },
    { maxBatch: 256, lingerMs: 0, maxQueue: 10_000, ...settings },
    {
      batch: (size, _ms, committed) => batches.push({ size, committed }),
      refused: () => {
        refusals++;
      },
    },
    weightOf,
  );
  const stored = async (): Promise<number[]> =>
    (await sql<{ id: number }>`select id from items order by id`.execute(db)).rows.map((row) =>
      Number(row.id),
    );
  return {
    db,
    committer,
    batches,
    stored,
    refusals: () => refusals,
    holdBatches: (hold: (ids: readonly number[]) => Promise<void>) => {
      before = hold;
    },
  };
}

const range = (from: number, count: number) => Array.from({ length: count }, (_, index) => from + index);

for (const dialect of allDialects) {
  describeOrSkip(`group commit on ${dialect}`, { skip: skipOn(dialect) }, () => {
    it('commits what arrives together in one transaction, answering each caller with its own result', async (t) => {
      const { committer, batches, stored } = await setup(t, dialect);
      const results = await Promise.all(range(1, 50).map((id) => committer.submit(id)));
      assert.deepEqual(
        results,
        range(1, 50).map((id) => `stored ${id}`),
      );
      assert.deepEqual(batches, [{ size: 50, committed: true }]);
      assert.deepEqual(await stored(), range(1, 50));
    });

    it('answers a caller only after the commit, and never before it', async (t) => {
      const { committer, holdBatches, db } = await setup(t, dialect);
      const held = gate();
      holdBatches(() => held.opened);
      let answered = false;
      const submitted = committer.submit(1).then(() => {
        answered = true;
      });
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(answered, false, 'not answered while its transaction is open');
      held.open();
      await submitted;
      // Answered: the row is visible to anyone, from outside the transaction.
      const seen = await sql<{ count: number }>`select count(*) as count from items`.execute(db);
      assert.equal(Number(seen.rows[0]?.count), 1);
    });

    it('forms the next batch from what arrives during a commit, within the batch size', async (t) => {
      const { committer, batches, holdBatches, stored } = await setup(t, dialect, { maxBatch: 4 });
      const held = gate();
      holdBatches(() => held.opened);
      const first = committer.submit(1);
      await new Promise((resolve) => setImmediate(resolve));
      const later = range(2, 9).map((id) => committer.submit(id));
      assert.equal(committer.waiting, 9, 'they wait while the first batch commits');
      held.open();
      await Promise.all([first, ...later]);
      assert.deepEqual(
        batches.map((batch) => batch.size),
        [1, 4, 4, 1],
      );
      assert.deepEqual(await stored(), range(1, 10));
    });

    it('fails every caller of a failed batch, and none of another; the failed batch leaves nothing', async (t) => {
      const { committer, batches, holdBatches, stored } = await setup(t, dialect);
      const held = gate();
      holdBatches(async (ids) => {
        await held.opened;
        if (ids.includes(3)) throw new Error('the database refused this batch');
      });
      const doomed = range(1, 5).map((id) => committer.submit(id));
      await new Promise((resolve) => setImmediate(resolve));
      const fine = range(6, 5).map((id) => committer.submit(id));
      held.open();
      const outcomes = await Promise.allSettled([...doomed, ...fine]);
      assert.deepEqual(
        outcomes.map((outcome) => outcome.status),
        [...Array(5).fill('rejected'), ...Array(5).fill('fulfilled')],
      );
      for (const outcome of outcomes.slice(0, 5)) {
        assert.match(String((outcome as PromiseRejectedResult).reason), /refused this batch/);
      }
      assert.deepEqual(batches, [
        { size: 5, committed: false },
        { size: 5, committed: true },
      ]);
      assert.deepEqual(await stored(), range(6, 5));
    });

    it('rolls back a batch whose write does not answer for every item, and fails every caller of it', async (t) => {
      const { db, stored } = await setup(t, dialect);
      const short = createGroupCommitter<number, string>(
        executorOf(db),
        async (transaction: Executor, ids) => {
          for (const id of ids)
            await sql`insert into items (id, value) values (${id}, ${`item ${id}`})`.execute(
              databaseOf(transaction),
            );
          return ids.slice(1).map((id) => `stored ${id}`);
        },
        { maxBatch: 256, lingerMs: 0, maxQueue: 100 },
      );
      t.after(() => short.close());
      const outcomes = await Promise.allSettled(range(1, 3).map((id) => short.submit(id)));
      assert.ok(
        outcomes.every((outcome) => outcome.status === 'rejected'),
        JSON.stringify(outcomes),
      );
      assert.match(
        String((outcomes[0] as PromiseRejectedResult).reason),
        /returned \d+ results for \d+ items/,
      );
      assert.deepEqual(await stored(), [], 'nothing committed');
    });

    it('refuses with 503 and Retry-After when the queue is full, instead of growing it', async (t) => {
      const { committer, holdBatches, refusals } = await setup(t, dialect, { maxQueue: 5 });
      const held = gate();
      holdBatches(() => held.opened);
      const committing = committer.submit(1);
      await new Promise((resolve) => setImmediate(resolve));
      const queued = range(2, 5).map((id) => committer.submit(id));
      const refused = await committer.submit(7).then(
        () => assert.fail('a full queue took another item'),
        (error: unknown) => error,
      );
      assert.ok(refused instanceof AppError);
      assert.equal(refused.status, 503);
      assert.equal(refused.problems[0]?.kind.name, 'WRITE_QUEUE_FULL');
      assert.equal(refused.headers['retry-after'], '1');
      assert.equal(refusals(), 1);
      held.open();
      await Promise.all([committing, ...queued]);
      assert.equal(await committer.submit(8), 'stored 8', 'room again once the queue drains');
    });

    it('bounds the queue by weight when items are weighed: a heavy item counts what it holds', async (t) => {
      // An item weighs the last two digits of its id.
      const { committer, holdBatches } = await setup(t, dialect, { maxQueue: 7 }, (id) => id % 100);
      const held = gate();
      holdBatches(() => held.opened);
      const committing = committer.submit(199);
      await new Promise((resolve) => setImmediate(resolve));
      const queued = [101, 102, 103].map((id) => committer.submit(id));
      const refusedOf = async (id: number) => {
        const error = await committer.submit(id).then(
          () => undefined,
          (failure: unknown) => failure,
        );
        return error instanceof AppError && error.problems[0]?.kind.name === 'WRITE_QUEUE_FULL';
      };
      assert.equal(await refusedOf(104), true, '6 waiting and 4 more is over 7');
      const fits = committer.submit(201);
      assert.equal(await refusedOf(202), true, 'full at 7');
      held.open();
      assert.deepEqual(await Promise.all([committing, ...queued, fits]), [
        'stored 199',
        'stored 101',
        'stored 102',
        'stored 103',
        'stored 201',
      ]);
    });

    it('starts a full batch at once, without lingering', async (t) => {
      const { committer, batches } = await setup(t, dialect, { maxBatch: 3, lingerMs: 600_000 });
      await Promise.all(range(1, 3).map((id) => committer.submit(id)));
      assert.deepEqual(batches, [{ size: 3, committed: true }]);
    });

    it('on close, commits what is waiting (even while lingering) and takes nothing more', async (t) => {
      const { committer, stored } = await setup(t, dialect, { lingerMs: 600_000 });
      const waiting = range(1, 3).map((id) => committer.submit(id));
      await committer.close();
      assert.deepEqual(await Promise.all(waiting), ['stored 1', 'stored 2', 'stored 3']);
      assert.deepEqual(await stored(), [1, 2, 3]);
      const late = await committer.submit(4).catch((error: unknown) => error);
      assert.ok(late instanceof AppError);
      assert.equal(late.problems[0]?.kind.name, 'SHUTTING_DOWN');
      await committer.close();
    });
  });
}
