import { type Kysely, type Migration, sql } from 'kysely';

/**
 * When a chain ends, if it does (a portal session's identity tokens end with the session): no token of it
 * expires later, and none of it is refreshed after it. Null: the chain lasts until revoked.
 *
 * The identity tokens recorded before this end with their session as the sessions table has it (when it
 * ended, or expires), and at once when the session is gone (purged, so expired or ended already).
 */
export const tokenChainEnds: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('tokens').addColumn('chain_ends_at', 'bigint').execute();
    await sql`
      update tokens set chain_ends_at = coalesce(
        (select coalesce(ended_at, expires_at) from portal_sessions
          where portal_sessions.id_hash = substr(tokens.key_id, 9)),
        0)
      where key_id like 'session:%'`.execute(db);
  },
};
