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
export function inTransaction<T>(
  executor: Executor,
  work: (transaction: Executor) => Promise<T>,
): Promise<T> {
  const db = databaseOf(executor);
  if (db.isTransaction) return work(executor);
  return db.transaction().execute((transaction) => work(executorOf(transaction)));
}
