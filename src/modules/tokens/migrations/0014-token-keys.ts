import type { Kysely, Migration } from 'kysely';

/**
 * The application key each token was made from (`POST /auth/token`), so that ending a key ends every
 * token made from it (refreshed ones included: a refresh carries it on); null for tokens an operator
 * issued, and for those issued before keys existed. And the successor of each token, found by the one it
 * was refreshed from (a refresh presented again within the grace answers that successor).
 */
export const tokenKeys: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('tokens').addColumn('key_id', 'text').execute();
    await db.schema.createIndex('tokens_key_id').on('tokens').column('key_id').execute();
    await db.schema.createIndex('tokens_rotated_from').on('tokens').column('rotated_from').execute();
  },
};
