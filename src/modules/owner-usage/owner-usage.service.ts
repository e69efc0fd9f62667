import type { Executor } from '../../platform/db/transactions.js';
import type { UsageCounts, UsageEntry, UsageMeter } from '../../platform/limits/usage-meter.js';
import { DAY_MS, dayOf } from '../../platform/utc-day.js';
import { createOwnerUsageRepository } from './owner-usage.repository.js';

export interface OwnerUsage extends UsageCounts {
  /** The UTC day, YYYY-MM-DD. */
  readonly day: string;
}

export interface OwnerUsageService {
  /** The owner's usage today (UTC), as every instance has stored it, and this one's not stored yet. */
  today(owner: bigint): Promise<OwnerUsage>;
  /**
   * Stores what this instance counted (put back to be stored next time if the write fails); one flush at a
   * time.
   */
  flush(): Promise<void>;
  /** Deletes the days older than the retention; how many rows. */
  purge(): Promise<{ deleted: number }>;
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export interface OwnerUsageSettings {
  /** How many days of usage are kept. */
  readonly retentionDays: number;
}

export function createOwnerUsageService({
  db,
  meter,
  settings,
  now = Date.now,
}: {
  readonly db: Executor;
  readonly meter: UsageMeter;
  readonly settings: OwnerUsageSettings;
  readonly now?: () => number;
}): OwnerUsageService {
  const repository = createOwnerUsageRepository(db);
  /** The flush under way (one at a time), and the entries it is writing (counted by `today` meanwhile). */
  let flushing: Promise<void> | undefined;
  let writing: readonly UsageEntry[] = [];

  async function write(): Promise<void> {
    // Sorted, so that two instances adding to the same rows lock them in one order (no deadlock): by the
    // rows' key as stored, the owner's text, as every version of the service sorts them.
    writing = meter
      .drain()
      .sort((a, b) => compare(a.owner.toString(), b.owner.toString()) || compare(a.day, b.day));
    try {
      await repository.add(writing);
    } catch (error) {
      meter.restore(writing);
      throw error;
    } finally {
      writing = [];
    }
  }

  return {
    async today(owner) {
      const day = dayOf(now());
      // Read what is being written before the stored row: a count is in one or the other, or both for an
      // instant (never in neither).
      const inFlight = writing.find((entry) => entry.owner === owner && entry.day === day)?.counts;
      const pending = meter.pending(owner, day);
      const stored = await repository.day(owner, day);
      const sum = (kind: keyof UsageCounts) => stored[kind] + pending[kind] + (inFlight?.[kind] ?? 0);
      return { day, requests: sum('requests'), upstream: sum('upstream'), refused: sum('refused') };
    },

    async flush() {
      // A flush asked for while one runs waits for it, then writes what came since.
      while (flushing) await flushing.catch(() => undefined);
      flushing = write().finally(() => {
        flushing = undefined;
      });
      return flushing;
    },

    async purge() {
      const deleted = await repository.deleteBefore(dayOf(now() - settings.retentionDays * DAY_MS));
      return { deleted };
    },
  };
}
