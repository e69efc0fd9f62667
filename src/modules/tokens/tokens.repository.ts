import type { Selectable } from 'kysely';
import type { Grant } from '../../platform/auth/grants.js';
import { tablesOf } from '../../platform/db/repository-view.js';
import type { Executor } from '../../platform/db/transactions.js';
import type { TokensTable, TokensTables } from './tokens.tables.js';

export type RevokedReason = 'revoked' | 'reuse_detected';

export interface TokenRecord {
  readonly jti: string;
  readonly owner: bigint;
  readonly grants: readonly Grant[];
  readonly chainId: string;
  readonly rotatedFrom: string | null;
  /**
   * What the chain was made from: an application key (`POST /auth/token`), or a portal session (its
   * identity tokens); null when an operator issued it. Ending it ends the chain.
   */
  readonly keyId: string | null;
  /** When the chain ends, if it does (a portal session's end): no token of it expires later or is refreshed after. */
  readonly chainEndsAt: number | null;
  readonly issuedAt: number;
  readonly expiresAt: number;
  readonly rotatedAt: number | null;
  readonly revokedAt: number | null;
}

export type NewToken = Omit<TokenRecord, 'rotatedAt' | 'revokedAt'>;

/**
 * All SQL about issued tokens, run on `executor`: the database, or a transaction the service started.
 * Times are epoch milliseconds.
 */
export function createTokensRepository(executor: Executor) {
  const db = tablesOf<TokensTables>(executor);
  return {
    async insert(token: NewToken): Promise<void> {
      await db
        .insertInto('tokens')
        .values({
          jti: token.jti,
          owner: token.owner.toString(),
          grants: token.grants.join(' '),
          chain_id: token.chainId,
          rotated_from: token.rotatedFrom,
          key_id: token.keyId,
          chain_ends_at: token.chainEndsAt,
          issued_at: token.issuedAt,
          expires_at: token.expiresAt,
        })
        .execute();
    },

    /** The change mark: it moves with every revocation or deletion of a token, whoever makes it. */
    async changeMark(): Promise<number> {
      const row = await db
        .selectFrom('token_changes')
        .select('serial')
        .where('id', '=', 1)
        .executeTakeFirst();
      return Number(row?.serial ?? 0);
    },

    async find(jti: string): Promise<TokenRecord | undefined> {
      const row = await db.selectFrom('tokens').selectAll().where('jti', '=', jti).executeTakeFirst();
      return row && toRecord(row);
    },

    /** The token refreshed from `jti`, if it was. */
    async successorOf(jti: string): Promise<TokenRecord | undefined> {
      const row = await db
        .selectFrom('tokens')
        .selectAll()
        .where('rotated_from', '=', jti)
        .executeTakeFirst();
      return row && toRecord(row);
    },

    /**
     * Marks `jti` rotated if it is neither rotated nor revoked yet; true when this call did. Of any number
     * of concurrent callers, exactly one gets true (one conditional update).
     */
    async markRotated(jti: string, now: number): Promise<boolean> {
      const updated = await db
        .updateTable('tokens')
        .set({ rotated_at: now })
        .where('jti', '=', jti)
        .where('rotated_at', 'is', null)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return updated.numUpdatedRows === 1n;
    },

    /**
     * Revokes every token of a chain (`{ chainId }`) or made from a key (`{ keyId }`) that is not revoked
     * yet: how many it revoked, and their chains. Until a pass revokes nothing: on PostgreSQL a pass that
     * waited for a refresh of the chain to commit does not see the token that refresh added (it was not
     * there when the statement began); the next pass does.
     */
    async revokeWhere(
      which: { readonly chainId: string } | { readonly keyId: string },
      reason: RevokedReason,
      now: number,
    ): Promise<{ revoked: number; chains: string[] }> {
      const [column, value] =
        'chainId' in which ? (['chain_id', which.chainId] as const) : (['key_id', which.keyId] as const);
      const chains = new Set<string>();
      let revoked = 0;
      for (;;) {
        const rows = await db
          .updateTable('tokens')
          .set({ revoked_at: now, revoked_reason: reason })
          .where(column, '=', value)
          .where('revoked_at', 'is', null)
          .returning('chain_id')
          .execute();
        if (rows.length === 0) return { revoked, chains: [...chains] };
        revoked += rows.length;
        for (const row of rows) chains.add(row.chain_id);
      }
    },
  };
}

function toRecord(row: Selectable<TokensTable>): TokenRecord {
  return {
    jti: row.jti,
    owner: BigInt(row.owner),
    grants: row.grants.split(' ').filter(Boolean) as Grant[],
    chainId: row.chain_id,
    rotatedFrom: row.rotated_from,
    keyId: row.key_id,
    chainEndsAt: row.chain_ends_at === null ? null : Number(row.chain_ends_at),
    issuedAt: Number(row.issued_at),
    expiresAt: Number(row.expires_at),
    rotatedAt: row.rotated_at === null ? null : Number(row.rotated_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
  };
}
