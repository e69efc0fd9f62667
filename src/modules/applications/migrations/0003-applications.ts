import type { Kysely, Migration } from 'kysely';

/** Developer applications, every state change of each, and the owners who applied. */
export const applications: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('applications')
      .addColumn('id', 'text', (column) => column.primaryKey())
      .addColumn('owner', 'text', (column) => column.notNull())
      .addColumn('name', 'text', (column) => column.notNull())
      .addColumn('description', 'text', (column) => column.notNull())
      .addColumn('grants', 'text', (column) => column.notNull())
      .addColumn('applied_at', 'bigint', (column) => column.notNull())
      .addColumn('state', 'text', (column) => column.notNull())
      .addColumn('credential_jti', 'text')
      .execute();
    // Newest first, whole or filtered by owner or by state (the list's keyset pagination).
    await db.schema
      .createIndex('applications_newest')
      .on('applications')
      .columns(['applied_at', 'id'])
      .execute();
    await db.schema
      .createIndex('applications_owner_newest')
      .on('applications')
      .columns(['owner', 'applied_at', 'id'])
      .execute();
    await db.schema
      .createIndex('applications_state_newest')
      .on('applications')
      .columns(['state', 'applied_at', 'id'])
      .execute();
    await db.schema
      .createTable('application_transitions')
      .addColumn('application_id', 'text', (column) => column.notNull().references('applications.id'))
      .addColumn('seq', 'integer', (column) => column.notNull())
      .addColumn('from_state', 'text')
      .addColumn('to_state', 'text', (column) => column.notNull())
      .addColumn('actor', 'text', (column) => column.notNull())
      .addColumn('at', 'bigint', (column) => column.notNull())
      .addColumn('reason', 'text')
      .addPrimaryKeyConstraint('application_transitions_pk', ['application_id', 'seq'])
      .execute();
    await db.schema
      .createTable('application_owners')
      .addColumn('owner', 'text', (column) => column.primaryKey())
      .addColumn('last_applied_at', 'bigint', (column) => column.notNull())
      .execute();
  },
};
