import type { Kysely, Migration } from 'kysely';

/** Named leases: which instance runs a periodic job this period (periodic-job.ts). */
export const leases: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('leases')
      .addColumn('name', 'text', (column) => column.primaryKey())
      .addColumn('holder', 'text', (column) => column.notNull())
      .addColumn('expires_at', 'bigint', (column) => column.notNull())
      .execute();
  },
};
