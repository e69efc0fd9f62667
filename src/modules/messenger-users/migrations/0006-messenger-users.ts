import { type Kysely, type Migration, sql } from 'kysely';

/** Discord users, their locale, and the Minecraft accounts linked to them. */
export const messengerUsers: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('messenger_users')
      .addColumn('snowflake', 'text', (column) => column.primaryKey())
      .addColumn('locale', 'text', (column) => column.notNull())
      .addColumn('username', 'text')
      .addColumn('created_at', 'bigint', (column) => column.notNull())
      .addColumn('updated_at', 'bigint', (column) => column.notNull())
      .execute();
    await db.schema
      .createTable('linked_accounts')
      .addColumn('uuid', 'text', (column) => column.primaryKey())
      .addColumn('snowflake', 'text', (column) =>
        column.notNull().references('messenger_users.snowflake').onDelete('cascade'),
      )
      .addColumn('is_primary', 'integer', (column) => column.notNull().check(sql`is_primary in (0, 1)`))
      .addColumn('linked_at', 'bigint', (column) => column.notNull())
      .execute();
    // A user's accounts in link order (the oldest is promoted when the primary goes).
    await db.schema
      .createIndex('linked_accounts_by_user')
      .on('linked_accounts')
      .columns(['snowflake', 'linked_at', 'uuid'])
      .execute();
    // At most one primary per user, held by the database whatever the code does.
    await sql`create unique index linked_accounts_one_primary on linked_accounts (snowflake) where is_primary = 1`.execute(
      db,
    );
  },
};
