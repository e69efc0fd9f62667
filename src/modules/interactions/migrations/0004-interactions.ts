import type { Kysely, Migration } from 'kysely';

/** The Discord bot's interaction logs, and the users and servers they mention. */
export const interactions: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('interaction_logs')
      .addColumn('id', 'text', (column) => column.primaryKey())
      .addColumn('fingerprint', 'text', (column) => column.notNull().unique())
      .addColumn('received_at', 'bigint', (column) => column.notNull())
      .addColumn('owner', 'text', (column) => column.notNull())
      .addColumn('user_id', 'text', (column) => column.notNull())
      .addColumn('server_id', 'text')
      .addColumn('document', 'text', (column) => column.notNull())
      .execute();
    // Newest first, whole or by user or by server (keyset pagination); retention deletes the oldest.
    await db.schema
      .createIndex('interaction_logs_newest')
      .on('interaction_logs')
      .columns(['received_at', 'id'])
      .execute();
    await db.schema
      .createIndex('interaction_logs_user_newest')
      .on('interaction_logs')
      .columns(['user_id', 'received_at', 'id'])
      .execute();
    await db.schema
      .createIndex('interaction_logs_server_newest')
      .on('interaction_logs')
      .columns(['server_id', 'received_at', 'id'])
      .execute();
    await db.schema
      .createTable('interaction_users')
      .addColumn('user_id', 'text', (column) => column.primaryKey())
      .addColumn('username', 'text', (column) => column.notNull())
      .addColumn('first_seen_at', 'bigint', (column) => column.notNull())
      .addColumn('last_seen_at', 'bigint', (column) => column.notNull())
      .execute();
    await db.schema
      .createTable('interaction_servers')
      .addColumn('server_id', 'text', (column) => column.primaryKey())
      .addColumn('server_name', 'text')
      .addColumn('first_seen_at', 'bigint', (column) => column.notNull())
      .addColumn('last_seen_at', 'bigint', (column) => column.notNull())
      .execute();
  },
};
