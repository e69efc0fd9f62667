import type { Database } from './database.js';

declare const opaque: unique symbol;

/**
 * Where statements run, the database or a transaction on it, as services hold and pass it: opaque, so a
 * service cannot run SQL on it; only a repository can, through `tablesOf` (repository-view.ts), and only
 * on its own tables.
 */
export interface Executor {
  readonly [opaque]: 'executor';
}

/** The database as an executor, for the composition root to hand to modules. */
export const executorOf = (db: Database): Executor => db as unknown as Executor;

/** What an executor is underneath; for this folder only. */
export const databaseOf = (executor: Executor): Database => executor as unknown as Database;

/**
 * Runs `work` in one transaction: everything it does through the executor it is given commits together,
 * or nothing does. When `executor` already is a transaction (a caller's), `work` joins it instead of
 * starting another, so that services compose: one service can do its part inside another's transaction.
 */
export async function inTransaction<T>(
  executor: Executor,
  work: (transaction: Executor) => Promise<T>,
): Promise<T> {
  const db = databaseOf(executor);
  if (db.isTransaction) return work(executor);
  const committed: (() => Promise<void>)[] = [];
  const result = await db.transaction().execute((transaction) => {
    const inner = executorOf(transaction);
    afterCommits.set(inner, committed);
    return work(inner);
  });
  for (const done of committed) await done();
  return result;
}

/** What waits for each open transaction to commit (the transactions `inTransaction` started). */
const afterCommits = new WeakMap<Executor, (() => Promise<void>)[]>();

/**
 * Runs `done` once what was written through `executor` is committed: after the commit of the transaction
 * it is (started by `inTransaction`, which resolves only once `done` has), or at once for the database
 * itself (each statement commits by itself; this then resolves when `done` has). Nothing runs for a
 * transaction that rolls back. For telling others of a change: before the commit they could read the old
 * state again, after it they read the new one.
 */
export async function afterCommit(executor: Executor, done: () => Promise<void>): Promise<void> {
  const waiting = afterCommits.get(executor);
  if (waiting) waiting.push(done);
  else if (!databaseOf(executor).isTransaction) await done();
  else throw new Error('afterCommit on a transaction that inTransaction did not start');
}
