import type { Kysely, Migration } from 'kysely';

/** Issued tokens, by jti: never the token text. A chain is a token and everything refreshed from it. */
export const tokens: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('tokens')
      .addColumn('jti', 'text', (column) => column.primaryKey())
      .addColumn('owner', 'text', (column) => column.notNull())
      .addColumn('grants', 'text', (column) => column.notNull())
      .addColumn('chain_id', 'text', (column) => column.notNull())
      .addColumn('rotated_from', 'text', (column) => column.references('tokens.jti'))
      .addColumn('issued_at', 'bigint', (column) => column.notNull())
      .addColumn('expires_at', 'bigint', (column) => column.notNull())
      .addColumn('rotated_at', 'bigint')
      .addColumn('revoked_at', 'bigint')
      .addColumn('revoked_reason', 'text')
      .execute();
    await db.schema.createIndex('tokens_chain_id').on('tokens').column('chain_id').execute();
    await db.schema.createIndex('tokens_owner').on('tokens').column('owner').execute();
  },
};
