import { DAY_MS, dayOf } from '../utc-day.js';

/** What an owner's usage of one day counts. */
export interface UsageCounts {
  /** Requests made with the owner's token or session (answered, whatever the status). */
  requests: number;
  /** Lookups that reached the upstream on the owner's behalf (their share of the key). */
  upstream: number;
  /** Requests refused with 429 (work budget, requests in progress, upstream share). */
  refused: number;
}

export type UsageKind = keyof UsageCounts;

export interface UsageEntry {
  readonly owner: bigint;
  /** The UTC day, YYYY-MM-DD. */
  readonly day: string;
  readonly counts: UsageCounts;
}

/**
 * Counts each owner's usage per UTC day in process (a map increment per request), for a store to take
 * (`drain`) and add to what every instance has counted.
 */
export interface UsageMeter {
  count(owner: bigint, kind: UsageKind): void;
  /** Everything counted since the last drain, and the counts start again. */
  drain(): UsageEntry[];
  /** Entries a store could not write, counted again (so that a failed write loses nothing). */
  restore(entries: readonly UsageEntry[]): void;
  /** What this instance counted for the owner's day and has not drained yet. */
  pending(owner: bigint, day: string): UsageCounts;
}

const zero = (): UsageCounts => ({ requests: 0, upstream: 0, refused: 0 });

export function createUsageMeter(now: () => number = Date.now): UsageMeter {
  /** Counts by day, then by owner: a request looks up two maps and builds no string. */
  let counted = new Map<string, Map<bigint, UsageEntry>>();
  // The current UTC day, worked out again only when the clock leaves it (not on every request).
  let today = '';
  let todayFrom = 0;
  let todayUntil = 0;
  const currentDay = (): string => {
    const at = now();
    if (at < todayFrom || at >= todayUntil) {
      todayFrom = at - (at % DAY_MS);
      todayUntil = todayFrom + DAY_MS;
      today = dayOf(todayFrom);
    }
    return today;
  };
  const entryOf = (owner: bigint, day: string): UsageEntry => {
    let owners = counted.get(day);
    if (!owners) {
      owners = new Map();
      counted.set(day, owners);
    }
    let entry = owners.get(owner);
    if (!entry) {
      entry = { owner, day, counts: zero() };
      owners.set(owner, entry);
    }
    return entry;
  };
  return {
    count(owner, kind) {
      entryOf(owner, currentDay()).counts[kind]++;
    },
    drain() {
      const entries = [...counted.values()].flatMap((owners) => [...owners.values()]);
      counted = new Map();
      return entries;
    },
    restore(entries) {
      for (const { owner, day, counts } of entries) {
        const entry = entryOf(owner, day);
        entry.counts.requests += counts.requests;
        entry.counts.upstream += counts.upstream;
        entry.counts.refused += counts.refused;
      }
    },
    pending(owner, day) {
      return { ...(counted.get(day)?.get(owner)?.counts ?? zero()) };
    },
  };
}
