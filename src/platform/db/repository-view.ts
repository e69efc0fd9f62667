import type { Kysely } from 'kysely';
import { databaseOf, type Executor } from './transactions.js';

/**
 * A repository's view of an executor: the given tables and no others, so the compiler refuses a query on
 * another module's table. Only repositories may import this (the layering rules say so).
 */
export function tablesOf<Tables extends Record<string, Record<string, unknown>>>(
  executor: Executor,
): Kysely<Tables> {
  return databaseOf(executor).withTables<Tables>();
}
