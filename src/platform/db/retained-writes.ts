import type { Logger } from '../logger.js';
import { DAY_MS } from '../utc-day.js';
import { deleteInBatches } from './batched-delete.js';
import { type BatchWrite, createGroupCommitter, type GroupCommitSettings } from './group-commit.js';
import { periodicJobOf } from './periodic-job.js';
import type { Executor } from './transactions.js';

/*
 * Rows that requests write many at a time, each durable before its answer, and that are deleted once older
 * than a retention (interaction logs, ping samples): a group committer for the writes, a delete in bounded
 * batches for the retention, and the job that runs it, started and closed with the module.
 */

export interface RetainedWritesOptions<Item, Result> {
  readonly db: Executor;
  /** What one transaction writes: every item of its batch, one result per item (group-commit.ts). */
  readonly write: BatchWrite<Item, Result>;
  readonly groupCommit: GroupCommitSettings;
  /** How much of the queue's bound an item takes (an item holding many rows counts them); 1 unless told. */
  readonly weightOf?: (item: Item) => number;
  /** How many days the rows are kept. */
  readonly retentionDays: number;
  /** Deletes up to `limit` of the oldest rows written before `cutoff` (epoch ms); how many it deleted. */
  readonly deleteBefore: (cutoff: number, limit: number) => Promise<number>;
  readonly now?: () => number;
}

export interface RetainedWrites<Item, Result> {
  /** Queues the item for the next transaction; resolves with its result once that transaction committed. */
  submit(item: Item): Promise<Result>;
  /** Deletes the rows older than the retention, in bounded batches, until done or `stop`; how many it deleted. */
  deleteExpired(stop?: AbortSignal): Promise<number>;
  /** Commits every item already taken; takes no more. */
  close(): Promise<void>;
}

/** The writes of a service whose rows are kept `retentionDays`: group-committed, deleted in batches. */
export function createRetainedWrites<Item, Result>({
  db,
  write,
  groupCommit,
  weightOf,
  retentionDays,
  deleteBefore,
  now = Date.now,
}: RetainedWritesOptions<Item, Result>): RetainedWrites<Item, Result> {
  const committer = createGroupCommitter(db, write, groupCommit, {}, weightOf);
  return {
    submit: (item) => committer.submit(item),
    deleteExpired(stop) {
      const cutoff = now() - retentionDays * DAY_MS;
      return deleteInBatches((limit) => deleteBefore(cutoff, limit), stop);
    },
    close: () => committer.close(),
  };
}

export interface RetentionJobOptions {
  /** The job's name: its lease's, the same on every instance. */
  readonly name: string;
  /** How often it runs, across all the instances sharing the database. */
  readonly everyMs: number;
  readonly db: Executor;
  readonly log: Logger;
  /** The service whose writes are retained (its `deleteExpired` and `close`, as RetainedWrites has them). */
  readonly writes: Pick<RetainedWrites<unknown, unknown>, 'deleteExpired' | 'close'>;
}

/**
 * A module's background work for its retained writes, as its `start` and `close`: the retention job, run
 * once per period across all the instances (periodic-job.ts) and logging how many rows it deleted, started
 * once the app is ready; at close, the job stopped first (a run under way told to stop, and waited for),
 * then the writes already taken committed.
 */
export function retentionJobOf({ name, everyMs, db, log, writes }: RetentionJobOptions): {
  start(): void;
  close(): Promise<void>;
} {
  const job = periodicJobOf({
    name,
    everyMs,
    db,
    log,
    run: async (stop) => ({ deleted: await writes.deleteExpired(stop) }),
  });
  return {
    start: job.start,
    async close() {
      await job.close();
      await writes.close();
    },
  };
}
