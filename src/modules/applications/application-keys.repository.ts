import { tablesOf } from '../../platform/db/repository-view.js';
import type { Executor } from '../../platform/db/transactions.js';
import type { ApplicationKeysTable, ApplicationsTables } from './applications.tables.js';

export type KeyEndReason = 'rotated' | 'revoked' | 'application_revoked';

export interface KeyRecord {
  readonly id: string;
  readonly applicationId: string;
  /** Whether the owner collected it (its secret's hash is stored from then on). */
  readonly collected: boolean;
  readonly madeAt: number;
  readonly collectedAt: number | null;
  readonly lastUsedAt: number | null;
  readonly endedAt: number | null;
  readonly endedReason: KeyEndReason | null;
}

/**
 * All SQL about application keys, run on `executor`: the database, or a transaction the service started.
 * A key's secret is never stored, only its hash. Times are epoch milliseconds.
 */
export function createApplicationKeysRepository(executor: Executor) {
  const db = tablesOf<ApplicationsTables>(executor);
  return {
    /** A new key for an application, not collected yet (no secret exists until it is). */
    async insert(key: { id: string; applicationId: string; madeAt: number; hash?: string }): Promise<void> {
      await db
        .insertInto('application_keys')
        .values({
          id: key.id,
          application_id: key.applicationId,
          key_hash: key.hash ?? null,
          made_at: key.madeAt,
          collected_at: key.hash === undefined ? null : key.madeAt,
          last_used_at: null,
          ended_at: null,
          ended_reason: null,
        })
        .execute();
    },

    /** The application's newest key, ended or not. */
    async newest(applicationId: string): Promise<KeyRecord | undefined> {
      const row = await db
        .selectFrom('application_keys')
        .selectAll()
        .where('application_id', '=', applicationId)
        .orderBy('made_at', 'desc')
        .orderBy('id', 'desc')
        .executeTakeFirst();
      return row && toRecord(row);
    },

    /** The key whose secret hashes to `hash`, ended or not. */
    async findByHash(hash: string): Promise<KeyRecord | undefined> {
      const row = await db
        .selectFrom('application_keys')
        .selectAll()
        .where('key_hash', '=', hash)
        .executeTakeFirst();
      return row && toRecord(row);
    },

    /**
     * Stores the secret's hash of a key not collected yet and not ended; true when this call did. Of any
     * number of concurrent callers, at most one gets true (one conditional update).
     */
    async collect(id: string, hash: string, now: number): Promise<boolean> {
      const updated = await db
        .updateTable('application_keys')
        .set({ key_hash: hash, collected_at: now })
        .where('id', '=', id)
        .where('key_hash', 'is', null)
        .where('ended_at', 'is', null)
        .executeTakeFirst();
      return updated.numUpdatedRows === 1n;
    },

    /**
     * Marks a collected key used, if it has not ended; true when it had not. Run in the transaction that
     * records the token made from it: the key's row stays locked until then, so a rotation or revocation
     * of the key either waits and then revokes that token too, or came first and this answers false.
     */
    async use(id: string, now: number): Promise<boolean> {
      const updated = await db
        .updateTable('application_keys')
        .set({ last_used_at: now })
        .where('id', '=', id)
        .where('ended_at', 'is', null)
        .executeTakeFirst();
      return updated.numUpdatedRows === 1n;
    },

    /** Ends a key that has not ended; true when this call did (one conditional update). */
    async end(id: string, reason: KeyEndReason, now: number): Promise<boolean> {
      const updated = await db
        .updateTable('application_keys')
        .set({ ended_at: now, ended_reason: reason })
        .where('id', '=', id)
        .where('ended_at', 'is', null)
        .executeTakeFirst();
      return updated.numUpdatedRows === 1n;
    },

    /** Every key of the application that has not ended: its ids (at most one, but all are ended together). */
    async unended(applicationId: string): Promise<string[]> {
      const rows = await db
        .selectFrom('application_keys')
        .select('id')
        .where('application_id', '=', applicationId)
        .where('ended_at', 'is', null)
        .execute();
      return rows.map((row) => row.id);
    },
  };
}

function toRecord(row: ApplicationKeysTable): KeyRecord {
  return {
    id: row.id,
    applicationId: row.application_id,
    collected: row.key_hash !== null,
    madeAt: Number(row.made_at),
    collectedAt: row.collected_at === null ? null : Number(row.collected_at),
    lastUsedAt: row.last_used_at === null ? null : Number(row.last_used_at),
    endedAt: row.ended_at === null ? null : Number(row.ended_at),
    endedReason: row.ended_reason as KeyEndReason | null,
  };
}
