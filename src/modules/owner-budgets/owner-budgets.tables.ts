/**
 * The owner budgets module's table. Conventions (docs/decisions.md): Discord IDs are TEXT of decimal
 * digits; times are epoch milliseconds in BIGINT (PostgreSQL) / INTEGER (SQLite) columns.
 */
export type OwnerBudgetsTables = {
  owner_budgets: OwnerBudgetsTable;
};

/** A budget of work an operator gave one owner, in place of WORK_BUDGET_UNITS. */
export type OwnerBudgetsTable = {
  owner: string;
  /** Cost units per WORK_BUDGET_WINDOW_SECONDS. */
  units: number;
  set_at: number;
  /** Who set it: `operator` (the command line). */
  set_by: string;
  reason: string | null;
};
