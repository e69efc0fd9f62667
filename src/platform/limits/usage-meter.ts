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
  readonly owner: string;
  /** The UTC day, YYYY-MM-DD. */
  readonly day: string;
  readonly counts: UsageCounts;
}

/**
 * Counts each owner's usage per UTC day in process (a map increment per request), for a store to take
 * (`drain`) and add to what every instance has counted.
 */
export interface UsageMeter {
  count(owner: bigint | string, kind: UsageKind): void;
  /** Everything counted since the last drain, and the counts start again. */
  drain(): UsageEntry[];
  /** Entries a store could not write, counted again (so that a failed write loses nothing). */
  restore(entries: readonly UsageEntry[]): void;
  /** What this instance counted for the owner's day and has not drained yet. */
  pending(owner: string, day: string): UsageCounts;
}

export const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

const zero = (): UsageCounts => ({ requests: 0, upstream: 0, refused: 0 });

export function createUsageMeter(now: () => number = Date.now): UsageMeter {
  let counted = new Map<string, UsageEntry>();
  const entryOf = (owner: string, day: string): UsageEntry => {
    const key = `${owner} ${day}`;
    let entry = counted.get(key);
    if (!entry) {
      entry = { owner, day, counts: zero() };
      counted.set(key, entry);
    }
    return entry;
  };
  return {
    count(owner, kind) {
      entryOf(owner.toString(), dayOf(now())).counts[kind]++;
    },
    drain() {
      const entries = [...counted.values()];
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
      return { ...(counted.get(`${owner} ${day}`)?.counts ?? zero()) };
    },
  };
}
