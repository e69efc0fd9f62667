import { tablesOf } from '../../platform/db/repository-view.js';
import type { Executor } from '../../platform/db/transactions.js';
import type { UsageCounts, UsageEntry } from '../../platform/limits/usage-meter.js';
import type { OwnerUsageTables } from './owner-usage.tables.js';

/** All SQL about owners' daily usage. */
export function createOwnerUsageRepository(executor: Executor) {
  const db = tablesOf<OwnerUsageTables>(executor);
  return {
    /** Adds each entry's counts to its owner's day (a row made on the first). */
    async add(entries: readonly UsageEntry[]): Promise<void> {
      if (entries.length === 0) return;
      await db
        .insertInto('owner_usage')
        .values(entries.map(({ owner, day, counts }) => ({ owner: owner.toString(), day, ...counts })))
        .onConflict((conflict) =>
          conflict.columns(['owner', 'day']).doUpdateSet((update) => ({
            requests: update('owner_usage.requests', '+', update.ref('excluded.requests')),
            upstream: update('owner_usage.upstream', '+', update.ref('excluded.upstream')),
            refused: update('owner_usage.refused', '+', update.ref('excluded.refused')),
          })),
        )
        .execute();
    },

    async day(owner: bigint, day: string): Promise<UsageCounts> {
      const row = await db
        .selectFrom('owner_usage')
        .select(['requests', 'upstream', 'refused'])
        .where('owner', '=', owner.toString())
        .where('day', '=', day)
        .executeTakeFirst();
      return {
        requests: Number(row?.requests ?? 0),
        upstream: Number(row?.upstream ?? 0),
        refused: Number(row?.refused ?? 0),
      };
    },

    /** Deletes the days before `day`; how many rows. */
    async deleteBefore(day: string): Promise<number> {
      const result = await db.deleteFrom('owner_usage').where('day', '<', day).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
