import type { Executor } from '../../platform/db/transactions.js';
import { dayOf, type UsageCounts, type UsageMeter } from '../../platform/limits/usage-meter.js';
import { createOwnerUsageRepository } from './owner-usage.repository.js';

export interface OwnerUsage extends UsageCounts {
  /** The UTC day, YYYY-MM-DD. */
  readonly day: string;
}

export interface OwnerUsageService {
  /** The owner's usage today (UTC), as every instance has stored it, and this one's not stored yet. */
  today(owner: bigint): Promise<OwnerUsage>;
  /** Stores what this instance counted (put back to be stored next time if the write fails). */
  flush(): Promise<void>;
  /** Deletes the days older than the retention; how many rows. */
  purge(): Promise<{ deleted: number }>;
}

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
  return {
    async today(owner) {
      const day = dayOf(now());
      const stored = await repository.day(owner.toString(), day);
      const pending = meter.pending(owner.toString(), day);
      return {
        day,
        requests: stored.requests + pending.requests,
        upstream: stored.upstream + pending.upstream,
        refused: stored.refused + pending.refused,
      };
    },

    async flush() {
      const entries = meter.drain();
      try {
        await repository.add(entries);
      } catch (error) {
        meter.restore(entries);
        throw error;
      }
    },

    async purge() {
      const deleted = await repository.deleteBefore(dayOf(now() - settings.retentionDays * 86_400_000));
      return { deleted };
    },
  };
}
