import type { Kysely, Migration } from 'kysely';

/** The players the service has fetched, the names it saw them under, and the latest copy of each. */
export const players: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('players')
      .addColumn('uuid', 'text', (column) => column.primaryKey())
      .addColumn('name', 'text')
      .addColumn('first_fetched_at', 'bigint', (column) => column.notNull())
      .addColumn('last_fetched_at', 'bigint', (column) => column.notNull())
      .addColumn('fetch_count', 'integer', (column) => column.notNull())
      .execute();
    await db.schema
      .createTable('player_names')
      .addColumn('uuid', 'text', (column) => column.notNull().references('players.uuid'))
      .addColumn('name_key', 'text', (column) => column.notNull())
      .addColumn('name', 'text', (column) => column.notNull())
      .addColumn('first_seen_at', 'bigint', (column) => column.notNull())
      .addColumn('last_seen_at', 'bigint', (column) => column.notNull())
      .addPrimaryKeyConstraint('player_names_pk', ['uuid', 'name_key'])
      .execute();
    await db.schema.createIndex('player_names_name_key').on('player_names').column('name_key').execute();
    await db.schema
      .createTable('player_snapshots')
      .addColumn('uuid', 'text', (column) => column.primaryKey().references('players.uuid'))
      .addColumn('body', 'text', (column) => column.notNull())
      .addColumn('fetched_at', 'bigint', (column) => column.notNull())
      .execute();
  },
};
