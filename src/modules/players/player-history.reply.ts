import { stringifyExact } from '../../platform/json.js';
import type { HistoryPoint } from './history-request.service.js';
import type { Session } from './player-sessions.service.js';

/*
 * The history answers' JSON, written here rather than by a schema's serializer: the values are the
 * player's own (any JSON), and a number too large for a double keeps its digits (json.ts `stringifyExact`).
 */

const time = (at: number) => new Date(at).toISOString();

export function historyBody({
  uuid,
  fields,
  points,
}: {
  uuid: string;
  fields: readonly string[];
  points: readonly HistoryPoint[];
}): string {
  return stringifyExact({
    uuid,
    points: points.map(({ at, values }) => ({
      at: time(at),
      values: Object.fromEntries(fields.map((field, index) => [field, values[index] ?? null])),
    })),
  });
}

export function sessionsBody({ uuid, sessions }: { uuid: string; sessions: readonly Session[] }): string {
  return stringifyExact({
    uuid,
    sessions: sessions.map(({ start, end, changes }) => ({
      start: time(start),
      end: end === undefined ? null : time(end),
      changes: Object.fromEntries(changes),
    })),
  });
}
