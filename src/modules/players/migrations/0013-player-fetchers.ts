import type { Kysely, Migration } from 'kysely';

/**
 * Whose lookup made each fetch of a player (the owner charged for it): the service's records are written
 * for some owner's request, and say which. Rows fetched before keep null: who asked was not recorded.
 */
export const playerFetchers: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('players').addColumn('last_fetched_by', 'text').execute();
    await db.schema.alterTable('player_snapshots').addColumn('fetched_by', 'text').execute();
  },
};
