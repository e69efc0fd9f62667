import { tablesOf } from '../../platform/db/repository-view.js';
import type { Executor } from '../../platform/db/transactions.js';
import type { OwnerBudgetsTable, OwnerBudgetsTables } from './owner-budgets.tables.js';

export interface OwnerBudget {
  readonly owner: bigint;
  /** Cost units per window. */
  readonly units: number;
  readonly setAt: number;
  readonly setBy: string;
  readonly reason: string | null;
}

/** All SQL about owners' budgets, run on `executor`. */
export function createOwnerBudgetsRepository(executor: Executor) {
  const db = tablesOf<OwnerBudgetsTables>(executor);
  return {
    async find(owner: bigint): Promise<OwnerBudget | undefined> {
      const row = await db
        .selectFrom('owner_budgets')
        .selectAll()
        .where('owner', '=', owner.toString())
        .executeTakeFirst();
      return row && toBudget(row);
    },

    async list(): Promise<OwnerBudget[]> {
      const rows = await db.selectFrom('owner_budgets').selectAll().orderBy('set_at', 'desc').execute();
      return rows.map(toBudget);
    },

    /** Sets the owner's budget, replacing one they had. */
    async save(budget: OwnerBudget): Promise<void> {
      const row = {
        owner: budget.owner.toString(),
        units: budget.units,
        set_at: budget.setAt,
        set_by: budget.setBy,
        reason: budget.reason,
      };
      await db
        .insertInto('owner_budgets')
        .values(row)
        .onConflict((conflict) =>
          conflict.column('owner').doUpdateSet({
            units: row.units,
            set_at: row.set_at,
            set_by: row.set_by,
            reason: row.reason,
          }),
        )
        .execute();
    },

    /** Whether the owner had a budget of their own (now gone). */
    async remove(owner: bigint): Promise<boolean> {
      const result = await db
        .deleteFrom('owner_budgets')
        .where('owner', '=', owner.toString())
        .executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
  };
}

const toBudget = (row: OwnerBudgetsTable): OwnerBudget => ({
  owner: BigInt(row.owner),
  units: Number(row.units),
  setAt: Number(row.set_at),
  setBy: row.set_by,
  reason: row.reason,
});
