import type { Kysely, Migration } from 'kysely';

/**
 * Each player's ping revision, moved by every write that stores a sample of theirs, and each day's revision
 * (the player's revision when the day last changed): a reader keeping the days in memory asks one row
 * whether they are still current, and reloads only the days that changed. Existing days get revision 0 and
 * their players no row (revision 0): a copy of them is current until the next write.
 */
export const pingRevisions: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('ping_players')
      .addColumn('player', 'text', (column) => column.primaryKey())
      .addColumn('revision', 'bigint', (column) => column.notNull())
      .execute();
    await db.schema
      .alterTable('ping_days')
      .addColumn('revision', 'bigint', (column) => column.notNull().defaultTo(0))
      .execute();
  },
};
