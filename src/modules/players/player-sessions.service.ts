import { diffJson, type ParsedChanges, valueAfterChanges } from '../../platform/json-changes.js';
import { formatPointer, type PointerPath, parsePointer, valueAtPath } from '../../platform/json-pointer.js';

/*
 * The arithmetic of play sessions, on players' documents as the history keeps them (a full copy and the
 * changes over it): what a session starts and ends with, and which numbers moved over it. How the snapshots
 * are read and grouped into sessions is player-history.service.ts's.
 */

/** Pointers whose change is when the session was, not what was played in it. */
const SESSION_TIMES = new Set(['/lastLogin', '/lastLogout']);

/** A document as the history reads it: a full copy, and the changes over it. */
export interface StoredDocument {
  readonly base: unknown;
  readonly changes: ParsedChanges;
}

/** A play session: from a login to its logout (undefined: still playing, or no logout seen yet). */
export interface Session {
  readonly start: number;
  readonly end: number | undefined;
  /** The numeric values that changed over the session, by pointer: how much they moved. */
  readonly changes: ReadonlyMap<string, number>;
}

/** The number at `path` in a document (a full copy and changes over it), if it is one. */
export function numberAt(document: StoredDocument, path: PointerPath): number | undefined {
  const value = valueAfterChanges(document.base, document.changes, path);
  return typeof value === 'number' ? value : undefined;
}

/** The last millisecond of the year 9999: the latest time RFC 3339's four-digit year can write. */
const LATEST_TIME = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * The time (epoch milliseconds) at `path`, if it is a number between 1970 and the end of the year 9999:
 * a session's start or end must be written as an RFC 3339 time, and the upstream's data is not checked
 * (a `lastLogin` of 1e300 is a number). Any other value is no time: no session starts or ends with it.
 */
export function timeAt(document: StoredDocument, path: PointerPath): number | undefined {
  const value = numberAt(document, path);
  return value !== undefined && value >= 0 && value <= LATEST_TIME ? value : undefined;
}

/** The numeric values that differ from `before` to `after` (new ones from 0), by pointer. */
export function numericChanges(before: StoredDocument, after: StoredDocument): Map<string, number> {
  const moved = new Map<string, number>();
  const was = valueAfterChanges(before.base, before.changes, []);
  const is = valueAfterChanges(after.base, after.changes, []);
  const add = (pointer: string, value: unknown, old: unknown) => {
    if (typeof value === 'number') {
      if (typeof old === 'number' || old === undefined) moved.set(pointer, value - (old ?? 0));
    } else if (typeof value === 'object' && value !== null && old === undefined) {
      // A new object (a first game of a mode): each of its numbers moved from nothing.
      for (const [key, inner] of Object.entries(value))
        add(`${pointer}${formatPointer([key])}`, inner, undefined);
    }
  };
  for (const [pointer, value] of diffJson(was, is)) {
    if (SESSION_TIMES.has(pointer)) continue;
    add(pointer, value, valueAtPath(was, parsePointer(pointer) ?? []));
  }
  return moved;
}
