import { type Kysely, type Migration, SqliteAdapter } from 'kysely';

/** Ping samples as they came in, and the per-day aggregates that endpoint 6 reads. */
export const ping: Migration = {
  async up(db: Kysely<unknown>) {
    const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
    await db.schema
      .createTable('ping_samples')
      // A row number, for retention's bounded deletes: SQLite's rowid, a PostgreSQL identity.
      .addColumn('id', sqlite ? 'integer' : 'bigint', (column) =>
        sqlite ? column.primaryKey() : column.primaryKey().generatedAlwaysAsIdentity(),
      )
      .addColumn('player', 'text', (column) => column.notNull())
      .addColumn('at', 'bigint', (column) => column.notNull())
      .addColumn('ping', 'integer', (column) => column.notNull())
      .addColumn('lobby', 'text', (column) => column.notNull())
      .execute();
    // Retention deletes the oldest first.
    await db.schema.createIndex('ping_samples_oldest').on('ping_samples').column('at').execute();
    await db.schema
      .createTable('ping_days')
      .addColumn('player', 'text', (column) => column.notNull())
      .addColumn('day', 'text', (column) => column.notNull())
      .addColumn('samples', 'bigint', (column) => column.notNull())
      .addColumn('total', 'bigint', (column) => column.notNull())
      .addColumn('min', 'integer', (column) => column.notNull())
      .addColumn('max', 'integer', (column) => column.notNull())
      .addColumn('last_at', 'bigint', (column) => column.notNull())
      .addColumn('last_lobby', 'text', (column) => column.notNull())
      .addColumn('history', 'text', (column) => column.notNull())
      .addColumn('history_at', 'text', (column) => column.notNull())
      // A player's days, newest first, are a range of this key.
      .addPrimaryKeyConstraint('ping_days_key', ['player', 'day'])
      .execute();
  },
};
