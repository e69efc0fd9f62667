import type { Kysely, Migration } from 'kysely';

/** Budgets of work operators gave single owners, in place of the default. */
export const ownerBudgets: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('owner_budgets')
      .addColumn('owner', 'text', (column) => column.primaryKey())
      .addColumn('units', 'bigint', (column) => column.notNull())
      .addColumn('set_at', 'bigint', (column) => column.notNull())
      .addColumn('set_by', 'text', (column) => column.notNull())
      .addColumn('reason', 'text')
      .execute();
  },
};
