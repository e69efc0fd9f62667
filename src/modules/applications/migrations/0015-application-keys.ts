import type { Kysely, Migration } from 'kysely';

/**
 * Application keys: what an approved application's owner exchanges for tokens (`POST /auth/token`). A key
 * is made on approval without its secret; the owner collects it once, which writes the secret's hash (the
 * secret itself is never stored). An application has at most one key that has not ended: rotating ends it
 * and makes the next, revoking the key or the application ends it.
 */
export const applicationKeys: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('application_keys')
      .addColumn('id', 'text', (column) => column.primaryKey())
      .addColumn('application_id', 'text', (column) => column.notNull().references('applications.id'))
      .addColumn('key_hash', 'text', (column) => column.unique())
      .addColumn('made_at', 'bigint', (column) => column.notNull())
      .addColumn('collected_at', 'bigint')
      .addColumn('last_used_at', 'bigint')
      .addColumn('ended_at', 'bigint')
      .addColumn('ended_reason', 'text')
      .execute();
    await db.schema
      .createIndex('application_keys_application')
      .on('application_keys')
      .columns(['application_id', 'made_at'])
      .execute();
  },
};
