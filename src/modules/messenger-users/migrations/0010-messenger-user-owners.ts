import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Chat-platform users and their linked accounts are kept per owner: each owner's bot has its own view, keyed
 * (owner, snowflake) and (owner, uuid), so "an account belongs to one user at most" and "one primary per
 * user" hold within an owner's view. The rows did not say who wrote them; whoever did held
 * `messenger:write`, so each owner ever issued a token carrying it gets a copy (each keeps the view it had;
 * with one such owner, the common case, that is exact). With none, they go to owner `0`, which no token
 * has: kept, and read only by an auditor (docs/decisions.md). SQLite cannot change a primary key: the tables
 * are made anew, filled, and take the old ones' names and indexes.
 */
export const messengerUserOwners: Migration = {
  async up(db: Kysely<unknown>) {
    const writers = sql`
      select distinct owner from tokens where ' ' || grants || ' ' like ${'% messenger:write %'}
      union
      select cast('0' as text) as owner
      where not exists (select 1 from tokens where ' ' || grants || ' ' like ${'% messenger:write %'})`;

    await db.schema
      .createTable('messenger_users_next')
      .addColumn('owner', 'text', (column) => column.notNull())
      .addColumn('snowflake', 'text', (column) => column.notNull())
      .addColumn('locale', 'text', (column) => column.notNull())
      .addColumn('username', 'text')
      .addColumn('created_at', 'bigint', (column) => column.notNull())
      .addColumn('updated_at', 'bigint', (column) => column.notNull())
      .addPrimaryKeyConstraint('messenger_users_key', ['owner', 'snowflake'])
      .execute();
    await db.schema
      .createTable('linked_accounts_next')
      .addColumn('owner', 'text', (column) => column.notNull())
      .addColumn('uuid', 'text', (column) => column.notNull())
      .addColumn('snowflake', 'text', (column) => column.notNull())
      .addColumn('is_primary', 'integer', (column) => column.notNull().check(sql`is_primary in (0, 1)`))
      .addColumn('linked_at', 'bigint', (column) => column.notNull())
      // An account belongs to one user at most, in each owner's view.
      .addPrimaryKeyConstraint('linked_accounts_key', ['owner', 'uuid'])
      .addForeignKeyConstraint(
        'linked_accounts_user',
        ['owner', 'snowflake'],
        'messenger_users_next',
        ['owner', 'snowflake'],
        (constraint) => constraint.onDelete('cascade'),
      )
      .execute();

    await sql`
      insert into messenger_users_next (owner, snowflake, locale, username, created_at, updated_at)
      select writers.owner, users.snowflake, users.locale, users.username, users.created_at, users.updated_at
      from messenger_users users cross join (${writers}) writers`.execute(db);
    await sql`
      insert into linked_accounts_next (owner, uuid, snowflake, is_primary, linked_at)
      select writers.owner, accounts.uuid, accounts.snowflake, accounts.is_primary, accounts.linked_at
      from linked_accounts accounts cross join (${writers}) writers`.execute(db);

    // The accounts first: they refer to the users.
    await db.schema.dropTable('linked_accounts').execute();
    await db.schema.dropTable('messenger_users').execute();
    // Renaming the users' table carries the accounts' reference to it along (both dialects).
    await db.schema.alterTable('messenger_users_next').renameTo('messenger_users').execute();
    await db.schema.alterTable('linked_accounts_next').renameTo('linked_accounts').execute();

    // A user's accounts in link order (the oldest is promoted when the primary goes).
    await db.schema
      .createIndex('linked_accounts_by_user')
      .on('linked_accounts')
      .columns(['owner', 'snowflake', 'linked_at', 'uuid'])
      .execute();
    // At most one primary per user of each owner's view, held by the database whatever the code does.
    await sql`create unique index linked_accounts_one_primary on linked_accounts (owner, snowflake) where is_primary = 1`.execute(
      db,
    );
  },
};
