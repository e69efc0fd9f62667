import type { Database } from './database.js';

/** Where statements run: the database itself, or a transaction on it. Repositories take one per call. */
export type Executor = Database;

/**
 * Runs `work` in one transaction: everything it does through the executor it is given commits together,
 * or nothing does. When `executor` already is a transaction (a caller's), `work` joins it instead of
 * starting another, so that services compose: one service can do its part inside another's transaction.
 */
export function inTransaction<T>(
  executor: Executor,
  work: (transaction: Executor) => Promise<T>,
): Promise<T> {
  return executor.isTransaction ? work(executor) : executor.transaction().execute(work);
}
