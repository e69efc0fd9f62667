import { type SelectQueryBuilder, type SqlBool, type StringReference, sql } from 'kysely';
import type { PagePosition } from '../pagination.js';

/**
 * `query`'s rows a page at a time, newest first (`platform/pagination.ts`): ordered by the `at` column, then
 * the `id` column for rows of the same millisecond, both descending; at most `limit`; after `position` (the
 * last row of the page before) when given. The one way a repository reads a page.
 */
export function newestFirst<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  columns: { readonly at: StringReference<DB, TB>; readonly id: StringReference<DB, TB> },
  limit: number,
  position: PagePosition | undefined,
): SelectQueryBuilder<DB, TB, O> {
  const { at, id } = columns;
  // Written out rather than as a row value, `(at, id) < (...)`: the same on both dialects and any version.
  const after = position
    ? query.where(
        sql<SqlBool>`(${sql.ref(at)} < ${position.at} or (${sql.ref(at)} = ${position.at} and ${sql.ref(id)} < ${position.id}))`,
      )
    : query;
  return after.orderBy(at, 'desc').orderBy(id, 'desc').limit(limit);
}
