import { type Kysely, SqliteAdapter } from 'kysely';
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

/**
 * Which database an executor runs on, for the rare statement a repository words differently per dialect
 * (one round trip on PostgreSQL where SQLite, in process, takes several statements at no cost).
 */
export function dialectOf(executor: Executor): 'sqlite' | 'postgres' {
  return databaseOf(executor).getExecutor().adapter instanceof SqliteAdapter ? 'sqlite' : 'postgres';
}
