import { LRUCache } from 'lru-cache';
import type { DayRecordSince } from './ping.repository.js';

/** A day as kept: its date, the revision it last changed at, its sample count and last sample, its history. */
interface Day {
  readonly day: string;
  readonly revision: number;
  readonly samples: number;
  readonly lastAt: number;
  readonly historyJson: string;
}

/** One player's days with samples, newest first, as of `revision`. */
export interface KeptDays<D extends Day> {
  readonly revision: number;
  readonly days: readonly D[];
}

/** Bookkeeping bytes per day beyond its history's text (the object, its date and lobby strings). */
const DAY_OVERHEAD_BYTES = 200;
const PLAYER_OVERHEAD_BYTES = 256;

/**
 * Players' days kept in memory, least recently read going first once they pass `maxBytes` (each day
 * counted by its history's text and its bookkeeping): a read whose player's revision has not moved costs no
 * query of the days, and one whose has reloads only the days that changed.
 */
export function createPingDaysStore<D extends Day>(maxBytes: number) {
  const kept = new LRUCache<string, KeptDays<D>>({
    maxSize: Math.max(1, maxBytes),
    sizeCalculation: ({ days }, player) =>
      PLAYER_OVERHEAD_BYTES +
      player.length +
      days.reduce((total, day) => total + day.historyJson.length + DAY_OVERHEAD_BYTES, 0),
  });
  return {
    get: (player: string): KeptDays<D> | undefined => kept.get(player),
    set: (player: string, days: KeptDays<D>): void => void kept.set(player, days),
  };
}

/**
 * The days as of the records read (every day, newest first), those whose history did not come kept from
 * `before`; undefined when a record came without its history and `before` does not hold that day as the
 * record has it (same revision, same count of samples, same last sample: a day changed by an instance of a
 * version before revisions, which leaves the revision as it was, differs there), and the caller reads every
 * history then. `revision`: the player's revision read before the records.
 */
export function mergeDays<D extends Day>(
  before: KeptDays<D> | undefined,
  records: readonly DayRecordSince[],
  revision: number,
  toDay: (record: DayRecordSince & { readonly historyJson: string }) => D,
): KeptDays<D> | undefined {
  const known = new Map(before?.days.map((day) => [day.day, day]));
  let latest = revision;
  const days: D[] = [];
  for (const record of records) {
    latest = Math.max(latest, record.revision);
    if (record.historyJson !== undefined) {
      days.push(toDay({ ...record, historyJson: record.historyJson }));
      continue;
    }
    const day = known.get(record.day);
    if (
      !day ||
      day.revision !== record.revision ||
      day.samples !== record.samples ||
      day.lastAt !== record.lastAt
    )
      return undefined;
    days.push(day);
  }
  return { revision: latest, days };
}
