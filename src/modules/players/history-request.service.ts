import { type FieldProblem, InputError } from '../../platform/errors.js';
import { type PointerPath, parsePointer } from '../../platform/json-pointer.js';

/*
 * What a caller may ask of a player's history (GET /player/{player}/history and /sessions), and how a
 * request is read: the pointers each once, the range checked, the snapshots thinned to the limit.
 */

export interface HistoryQuery {
  /** The pointers asked for, as given (the answer's keys), with their tokens. */
  readonly fields: readonly { readonly pointer: string; readonly path: PointerPath }[];
  readonly from: number;
  readonly to: number;
  readonly limit: number;
}

/** One snapshot's values of the fields asked for (undefined: the player had no such value). */
export interface HistoryPoint {
  readonly at: number;
  readonly values: readonly unknown[];
}

/** What a caller asks of a player's history: pointers as given, and the range (epoch ms, inclusive). */
export interface HistoryRequest {
  readonly fields: readonly string[];
  readonly from?: number;
  readonly to?: number;
  readonly limit?: number;
}

export interface SessionsRequest {
  readonly from?: number;
  readonly to?: number;
  readonly limit?: number;
}

/** The most pointers one history read may name. */
export const MAX_HISTORY_FIELDS = 50;
/** How many points a history read gives when not told, and how many sessions. */
export const DEFAULT_HISTORY_POINTS = 100;
export const DEFAULT_SESSIONS = 20;

/** `count` seqs from `first` to `last`, evenly spread, both ends in (one: the last). */
export function thinnedSeqs(first: number, last: number, count: number): number[] {
  const total = last - first + 1;
  if (total <= count) return Array.from({ length: total }, (_, index) => first + index);
  if (count === 1) return [last];
  return Array.from({ length: count }, (_, index) => first + Math.round((index * (total - 1)) / (count - 1)));
}

/** The pointers asked for, each once, in the order first given; an InputError naming the bad ones. */
export function fieldsOf(given: readonly string[]): HistoryQuery['fields'] {
  const problems: FieldProblem[] = [];
  const fields = new Map<string, PointerPath>();
  given.forEach((pointer, index) => {
    const path = parsePointer(pointer);
    if (path === undefined || pointer === '') {
      problems.push({
        field: ['fields', index],
        rule: 'must be a JSON Pointer into the player object, such as /stats/Bedwars/wins_bedwars',
      });
    } else fields.set(pointer, path);
  });
  if (problems.length > 0) throw new InputError(problems);
  if (fields.size === 0 || fields.size > MAX_HISTORY_FIELDS) {
    throw new InputError([{ field: ['fields'], rule: `must name 1 to ${MAX_HISTORY_FIELDS} pointers` }]);
  }
  return [...fields].map(([pointer, path]) => ({ pointer, path }));
}

/** The range asked for, from the first snapshot to now when not told; an InputError when it is backwards. */
export function rangeOf(request: { from?: number; to?: number }, now: number): { from: number; to: number } {
  const { from = 0, to = now } = request;
  if (from > to) {
    throw new InputError([
      {
        field: ['from'],
        rule: 'must not be after to',
        developerRule: (name) =>
          `(${new Date(from).toISOString()}) must not be after ${name(['to'])} (${new Date(to).toISOString()})`,
      },
    ]);
  }
  return { from, to };
}
