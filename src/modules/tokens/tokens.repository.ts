import type { Grant } from '../../platform/auth.js';
import type { Database } from '../../platform/db/database.js';

export type RevokedReason = 'revoked' | 'reuse_detected';

export interface TokenRecord {
  readonly jti: string;
  readonly owner: bigint;
  readonly grants: readonly Grant[];
  readonly chainId: string;
  readonly rotatedFrom: string | null;
  readonly issuedAt: number;
  readonly expiresAt: number;
  readonly rotatedAt: number | null;
  readonly revokedAt: number | null;
}

export type NewToken = Omit<TokenRecord, 'rotatedAt' | 'revokedAt'>;

/** All SQL about issued tokens. Times are epoch milliseconds. */
export function createTokensRepository(db: Database) {
  const insert = (executor: Database, token: NewToken) =>
    executor
      .insertInto('tokens')
      .values({
        jti: token.jti,
        owner: token.owner.toString(),
        grants: token.grants.join(' '),
        chain_id: token.chainId,
        rotated_from: token.rotatedFrom,
        issued_at: token.issuedAt,
        expires_at: token.expiresAt,
      })
      .execute();

  return {
    async insert(token: NewToken): Promise<void> {
      await insert(db, token);
    },

    async find(jti: string): Promise<TokenRecord | undefined> {
      const row = await db.selectFrom('tokens').selectAll().where('jti', '=', jti).executeTakeFirst();
      return (
        row && {
          jti: row.jti,
          owner: BigInt(row.owner),
          grants: row.grants.split(' ').filter(Boolean) as Grant[],
          chainId: row.chain_id,
          rotatedFrom: row.rotated_from,
          issuedAt: Number(row.issued_at),
          expiresAt: Number(row.expires_at),
          rotatedAt: row.rotated_at === null ? null : Number(row.rotated_at),
          revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
        }
      );
    },

    /**
     * Marks `jti` rotated and records its successor, atomically: only the first of any number of
     * concurrent callers finds the token unrotated; it gets true, every other caller false.
     */
    async rotate(jti: string, successor: NewToken, now: number): Promise<boolean> {
      return db.transaction().execute(async (transaction) => {
        const updated = await transaction
          .updateTable('tokens')
          .set({ rotated_at: now })
          .where('jti', '=', jti)
          .where('rotated_at', 'is', null)
          .where('revoked_at', 'is', null)
          .executeTakeFirst();
        if (updated.numUpdatedRows !== 1n) return false;
        await insert(transaction, successor);
        return true;
      });
    },

    /** Revokes every token of a chain that is not revoked yet; returns how many it revoked. */
    async revokeChain(chainId: string, reason: RevokedReason, now: number): Promise<number> {
      const result = await db
        .updateTable('tokens')
        .set({ revoked_at: now, revoked_reason: reason })
        .where('chain_id', '=', chainId)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },
  };
}

export type TokensRepository = ReturnType<typeof createTokensRepository>;
