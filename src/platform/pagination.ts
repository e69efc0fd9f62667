import { AppError, ErrorKinds } from './errors.js';

/**
 * Keyset pagination, newest first: a page ends at an item's position (its time, then its id, for items of
 * the same millisecond), and the next page starts after it. Items arriving meanwhile are newer, so they
 * land before the cursor: no repeats, no gaps. The cursor is opaque to clients (base64url).
 */
export interface PagePosition {
  /** Epoch milliseconds. */
  readonly at: number;
  readonly id: string;
}

const CURSOR = /^([0-9]{1,15})\.([0-9a-f-]{36})$/;

export function encodeCursor(position: PagePosition): string {
  return Buffer.from(`${position.at}.${position.id}`).toString('base64url');
}

/** The position a cursor names; 400 for anything this service did not give. */
export function decodeCursor(cursor: string): PagePosition {
  const match = CURSOR.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  if (!match?.[1] || !match[2]) {
    throw AppError.of(ErrorKinds.INVALID_FIELD, {
      cause: 'Invalid query string',
      reason: 'cursor is not one this service gave',
      developerReason: 'query/cursor must be the next_cursor of an earlier page, as it was given',
    });
  }
  return { at: Number(match[1]), id: match[2] };
}

/** A page from `limit + 1` rows: the first `limit`, and the cursor after them when there were more. */
export function pageOf<T extends { id: string }>(
  rows: readonly T[],
  limit: number,
  atOf: (row: T) => number,
): { items: T[]; nextCursor?: string } {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return rows.length > limit && last
    ? { items, nextCursor: encodeCursor({ at: atOf(last), id: last.id }) }
    : { items };
}
