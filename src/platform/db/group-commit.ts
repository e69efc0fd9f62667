import { AppError, ErrorKinds } from '../errors.js';
import { type Executor, inTransaction } from './transactions.js';

/** How a group committer forms its batches. */
export interface GroupCommitSettings {
  /** The most items one transaction commits. */
  readonly maxBatch: number;
  /**
   * How long the first item of a batch waits for company before its transaction starts, when no commit is
   * under way. 0: at once (batches still form from what arrives while a commit is under way).
   */
  readonly lingerMs: number;
  /**
   * The most items waiting for a transaction (counted by `weightOf`: one each unless told); beyond it
   * `submit` refuses (503) instead of queueing.
   */
  readonly maxQueue: number;
}

/** What a batch's transaction does: writes every item, and returns one result per item, in order. */
export type BatchWrite<Item, Result> = (
  transaction: Executor,
  items: readonly Item[],
) => Promise<readonly Result[]>;

export interface GroupCommitter<Item, Result> {
  /**
   * Queues the item for the next transaction and resolves, with its result, only once that transaction has
   * committed. Rejects with the batch's error when that transaction fails (every item of that batch, and
   * none of another's), with 503 `WRITE_QUEUE_FULL` when too many items are waiting, and with 503
   * `SHUTTING_DOWN` once closing.
   */
  submit(item: Item): Promise<Result>;
  /** How many items are waiting for a transaction (not counting the one committing). */
  readonly waiting: number;
  /** Takes no more items, commits every item already taken, and resolves when the last batch has ended. */
  close(): Promise<void>;
}

export interface GroupCommitObserver {
  /** A batch's transaction ended: how many items, how long it took, and whether it committed. */
  batch?(size: number, durationMs: number, committed: boolean): void;
  /** An item was refused because the queue was full. */
  refused?(): void;
}

interface Pending<Item, Result> {
  readonly item: Item;
  readonly resolve: (result: Result) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Group commit: callers hand in rows, and one transaction commits everything that arrived together, so a
 * burst of N writes costs one commit (one fsync) instead of N, while each caller is still answered only
 * after its row is durable. One batch is in its transaction at a time; what arrives meanwhile forms the
 * next batch, which starts as soon as the current one ends.
 */
export function createGroupCommitter<Item, Result>(
  db: Executor,
  write: BatchWrite<Item, Result>,
  settings: GroupCommitSettings,
  observer: GroupCommitObserver = {},
  /** How much of the queue's bound an item takes (an item holding many rows counts them). */
  weightOf: (item: Item) => number = () => 1,
): GroupCommitter<Item, Result> {
  const queue: Pending<Item, Result>[] = [];
  /** The weight of what waits in `queue`. */
  let queuedWeight = 0;
  let committing = false;
  let timer: NodeJS.Timeout | undefined;
  let immediate: NodeJS.Immediate | undefined;
  let closing = false;
  const drained: (() => void)[] = [];

  /** Starts the next batch after pending I/O has been read (so what arrived together joins it). */
  function startSoon(): void {
    if (timer) clearTimeout(timer);
    timer = undefined;
    immediate ??= setImmediate(run);
  }

  function schedule(): void {
    if (committing || immediate || queue.length === 0) return;
    if (settings.lingerMs === 0 || closing || queue.length >= settings.maxBatch) startSoon();
    else timer ??= setTimeout(startSoon, settings.lingerMs);
  }

  async function run(): Promise<void> {
    immediate = undefined;
    if (committing || queue.length === 0) return;
    committing = true;
    const batch = queue.splice(0, settings.maxBatch);
    for (const pending of batch) queuedWeight -= weightOf(pending.item);
    const started = performance.now();
    try {
      const results = await inTransaction(db, async (transaction) => {
        const written = await write(
          transaction,
          batch.map((pending) => pending.item),
        );
        // A write that does not answer for every item is a bug: roll back rather than guess.
        if (written.length !== batch.length)
          throw new Error(`a batch write returned ${written.length} results for ${batch.length} items`);
        return written;
      });
      observer.batch?.(batch.length, performance.now() - started, true);
      for (const [index, pending] of batch.entries()) pending.resolve(results[index] as Result);
    } catch (error) {
      observer.batch?.(batch.length, performance.now() - started, false);
      for (const pending of batch) pending.reject(error);
    } finally {
      committing = false;
      // What waited through this commit has lingered enough: it goes next, at once.
      if (queue.length > 0) startSoon();
      else for (const done of drained.splice(0)) done();
    }
  }

  return {
    submit(item) {
      if (closing) {
        return Promise.reject(
          AppError.of(ErrorKinds.SHUTTING_DOWN, {
            developerReason: 'the instance is shutting down; send the request again',
            headers: { 'retry-after': '1' },
          }),
        );
      }
      const weight = weightOf(item);
      // An item heavier than the whole bound still goes through an empty queue.
      if (queuedWeight > 0 && queuedWeight + weight > settings.maxQueue) {
        observer.refused?.();
        return Promise.reject(
          AppError.of(ErrorKinds.WRITE_QUEUE_FULL, {
            developerReason: `${queue.length} writes are waiting for the database already; retry after a second`,
            headers: { 'retry-after': '1' },
          }),
        );
      }
      queuedWeight += weight;
      return new Promise<Result>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        schedule();
      });
    },

    get waiting() {
      return queue.length;
    },

    close() {
      closing = true;
      if (!committing && queue.length === 0) return Promise.resolve();
      const done = new Promise<void>((resolve) => drained.push(resolve));
      if (!committing) startSoon();
      return done;
    },
  };
}
