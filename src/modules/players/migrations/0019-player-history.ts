import { type Kysely, type Migration, SqliteAdapter, sql } from 'kysely';

/**
 * Each player's snapshots, one per fetch that found the player changed (player-history.service.ts): a full
 * copy now and then, and between them the changes against it. `base_seq` is the full copy a row's changes
 * are against (itself for a full copy); `seq` counts a player's snapshots from 1 with no gap, `at` never
 * goes back. The head row is each player's latest snapshot, what the next fetch is compared with.
 *
 * On PostgreSQL the snapshots are partitioned by UTC month of `at` (the module creates the months ahead),
 * with a default partition for any month not created yet, so that retention drops a month's partition
 * instead of deleting its rows. A full copy and its changes are always in the same month.
 */
export const playerHistory: Migration = {
  async up(db: Kysely<unknown>) {
    if (db.getExecutor().adapter instanceof SqliteAdapter) {
      await db.schema
        .createTable('player_history')
        .addColumn('uuid', 'text', (column) => column.notNull())
        .addColumn('seq', 'integer', (column) => column.notNull())
        .addColumn('at', 'bigint', (column) => column.notNull())
        .addColumn('base_seq', 'integer', (column) => column.notNull())
        .addColumn('body', 'blob', (column) => column.notNull())
        .addColumn('fetched_by', 'text')
        .addPrimaryKeyConstraint('player_history_pk', ['uuid', 'seq'])
        .execute();
      await db.schema
        .createIndex('player_history_player_at')
        .on('player_history')
        .columns(['uuid', 'at'])
        .execute();
      await db.schema.createIndex('player_history_at').on('player_history').columns(['at']).execute();
    } else {
      await sql`create table player_history (
        uuid text not null,
        seq integer not null,
        at bigint not null,
        base_seq integer not null,
        body bytea not null,
        fetched_by text,
        primary key (uuid, seq, at)
      ) partition by range (at)`.execute(db);
      await sql`create table player_history_default partition of player_history default`.execute(db);
      await sql`create index player_history_player_at on player_history (uuid, at)`.execute(db);
      await sql`create index player_history_at on player_history (at)`.execute(db);
    }
    await db.schema
      .createTable('player_history_heads')
      .addColumn('uuid', 'text', (column) => column.primaryKey())
      .addColumn('seq', 'integer', (column) => column.notNull())
      .addColumn('at', 'bigint', (column) => column.notNull())
      .addColumn('base_seq', 'integer', (column) => column.notNull())
      .addColumn('base_at', 'bigint', (column) => column.notNull())
      .addColumn('base_bytes', 'integer', (column) => column.notNull())
      .addColumn('since_base', 'integer', (column) => column.notNull())
      .addColumn('changes_bytes', 'integer', (column) => column.notNull())
      .addColumn('digest', 'text', (column) => column.notNull())
      .execute();
  },
};
