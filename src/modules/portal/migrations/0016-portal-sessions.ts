import type { Kysely, Migration } from 'kysely';

/**
 * Developers' sign-ins through Discord: each sign-in under way (its `state`, kept until the browser comes
 * back, once; its PKCE verifier is derived from the state, never stored), and each session it starts. Both
 * are stored by the hash of their secret, never the secret.
 */
export const portalSessions: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('sign_in_attempts')
      .addColumn('state_hash', 'text', (column) => column.primaryKey())
      .addColumn('return_to', 'text', (column) => column.notNull())
      .addColumn('expires_at', 'bigint', (column) => column.notNull())
      .execute();
    await db.schema
      .createTable('portal_sessions')
      .addColumn('id_hash', 'text', (column) => column.primaryKey())
      .addColumn('owner', 'text', (column) => column.notNull())
      .addColumn('username', 'text', (column) => column.notNull())
      .addColumn('global_name', 'text')
      .addColumn('created_at', 'bigint', (column) => column.notNull())
      .addColumn('expires_at', 'bigint', (column) => column.notNull())
      .addColumn('ended_at', 'bigint')
      .execute();
    await db.schema
      .createIndex('portal_sessions_expiry')
      .on('portal_sessions')
      .column('expires_at')
      .execute();
    await db.schema
      .createIndex('sign_in_attempts_expiry')
      .on('sign_in_attempts')
      .column('expires_at')
      .execute();
  },
};
