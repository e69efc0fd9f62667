import { Type } from 'typebox';
import { InputError } from './errors.js';

/**
 * Keyset pagination, newest first: a page ends at an item's position (its time, then its id, for items of
 * the same millisecond), and the next page starts after it. Items arriving meanwhile are newer, so they
 * land before the cursor: no repeats, no gaps. The cursor is opaque to clients (base64url). Every list
 * pages this one way: its service reads a page with `readPage`, and its repository reads the rows with
 * `newestFirst` (`platform/db/keyset-page.ts`).
 */
/** A page's size when the request names none. */
export const DEFAULT_PAGE_SIZE = 20;

/**
 * A list's `limit` query parameter: optional, its default filled in by validation (useDefaults), so the
 * handler always gets one.
 */
export const PageLimit = () =>
  Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 100,
      default: DEFAULT_PAGE_SIZE,
      description: `Page size (1 to 100); ${DEFAULT_PAGE_SIZE} unless given.`,
    }),
  );

export interface PagePosition {
  /** Epoch milliseconds. */
  readonly at: number;
  readonly id: string;
}

/** What a client asks of a list: how many items, and where the page starts (an earlier page's cursor). */
export interface PageQuery {
  readonly limit: number;
  /** The `nextCursor` of an earlier page; the newest items when not given. */
  readonly cursor?: string;
}

/** A page of items, newest first. */
export interface Page<T> {
  readonly items: T[];
  /** Where the next page starts; undefined on the last page. */
  readonly nextCursor?: string;
}

const CURSOR = /^([0-9]{1,15})\.([0-9a-f-]{36})$/;

function encodeCursor(position: PagePosition): string {
  return Buffer.from(`${position.at}.${position.id}`).toString('base64url');
}

/** The position a cursor names; an InputError on `cursor` for anything this service did not give. */
function decodeCursor(cursor: string): PagePosition {
  const match = CURSOR.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  if (!match?.[1] || !match[2]) {
    throw new InputError([
      {
        field: ['cursor'],
        rule: 'is not one this service gave',
        developerRule: 'must be the next_cursor of an earlier page, as it was given',
      },
    ]);
  }
  return { at: Number(match[1]), id: match[2] };
}

/**
 * The page `query` asks for: `read(limit, after)` reads up to `limit` rows newest first, after the position
 * `after` when given (the repository's `newestFirst`); it is asked for one row more than the page holds, to
 * tell whether there is a next page. `atOf` is a row's time, the first half of its position. An InputError
 * on `cursor` (read nothing) when the cursor is not one this service gave.
 */
export async function readPage<T extends { readonly id: string }>(
  { limit, cursor }: PageQuery,
  read: (limit: number, after: PagePosition | undefined) => Promise<readonly T[]>,
  atOf: (row: T) => number,
): Promise<Page<T>> {
  const after = cursor === undefined ? undefined : decodeCursor(cursor);
  const rows = await read(limit + 1, after);
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return rows.length > limit && last
    ? { items, nextCursor: encodeCursor({ at: atOf(last), id: last.id }) }
    : { items };
}
