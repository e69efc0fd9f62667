import type { Kysely, Migration } from 'kysely';

/** Each owner's usage per UTC day, added to by every instance: what the developer portal shows. */
export const ownerUsage: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('owner_usage')
      .addColumn('owner', 'text', (column) => column.notNull())
      .addColumn('day', 'text', (column) => column.notNull())
      .addColumn('requests', 'bigint', (column) => column.notNull())
      .addColumn('upstream', 'bigint', (column) => column.notNull())
      .addColumn('refused', 'bigint', (column) => column.notNull())
      .addPrimaryKeyConstraint('owner_usage_pk', ['owner', 'day'])
      .execute();
    await db.schema.createIndex('owner_usage_day').on('owner_usage').column('day').execute();
  },
};
