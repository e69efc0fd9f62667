import { tablesOf } from '../../platform/db/repository-view.js';
import type { Executor } from '../../platform/db/transactions.js';
import type { PortalTables } from './portal.tables.js';

export interface SignInAttempt {
  readonly returnTo: string;
  readonly expiresAt: number;
}

export interface SessionRecord {
  readonly owner: bigint;
  readonly username: string;
  readonly globalName: string | null;
  readonly createdAt: number;
  readonly expiresAt: number;
}

/** All SQL about sign-ins and sessions. Secrets are looked up by their hash; times are epoch milliseconds. */
export function createSessionsRepository(executor: Executor) {
  const db = tablesOf<PortalTables>(executor);
  return {
    async addAttempt(stateHash: string, attempt: SignInAttempt): Promise<void> {
      await db
        .insertInto('sign_in_attempts')
        .values({
          state_hash: stateHash,
          return_to: attempt.returnTo,
          expires_at: attempt.expiresAt,
        })
        .execute();
    },

    /** Takes the attempt of a state: it is deleted, so of any number of callers at most one gets it. */
    async takeAttempt(stateHash: string): Promise<SignInAttempt | undefined> {
      const rows = await db
        .deleteFrom('sign_in_attempts')
        .where('state_hash', '=', stateHash)
        .returning(['return_to', 'expires_at'])
        .execute();
      const row = rows[0];
      return row && { returnTo: row.return_to, expiresAt: Number(row.expires_at) };
    },

    async addSession(idHash: string, session: SessionRecord): Promise<void> {
      await db
        .insertInto('portal_sessions')
        .values({
          id_hash: idHash,
          owner: session.owner.toString(),
          username: session.username,
          global_name: session.globalName,
          created_at: session.createdAt,
          expires_at: session.expiresAt,
          ended_at: null,
        })
        .execute();
    },

    /** The session, if it has neither ended nor expired at `now`. */
    async liveSession(idHash: string, now: number): Promise<SessionRecord | undefined> {
      const row = await db
        .selectFrom('portal_sessions')
        .selectAll()
        .where('id_hash', '=', idHash)
        .where('ended_at', 'is', null)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return (
        row && {
          owner: BigInt(row.owner),
          username: row.username,
          globalName: row.global_name,
          createdAt: Number(row.created_at),
          expiresAt: Number(row.expires_at),
        }
      );
    },

    /**
     * The session's expiry if it is live at `now`, its row held until the caller's transaction ends (an
     * update that changes nothing): a sign-out at the same moment waits for it, or ended it first.
     */
    async holdLiveSession(idHash: string, now: number): Promise<number | undefined> {
      const row = await db
        .updateTable('portal_sessions')
        .set((set) => ({ expires_at: set.ref('expires_at') }))
        .where('id_hash', '=', idHash)
        .where('ended_at', 'is', null)
        .where('expires_at', '>', now)
        .returning('expires_at')
        .executeTakeFirst();
      return row && Number(row.expires_at);
    },

    async endSession(idHash: string, now: number): Promise<void> {
      await db
        .updateTable('portal_sessions')
        .set({ ended_at: now })
        .where('id_hash', '=', idHash)
        .where('ended_at', 'is', null)
        .execute();
    },

    /** Deletes sign-ins and sessions expired before `now` (and sessions ended before it); how many of each. */
    async purge(now: number): Promise<{ attempts: number; sessions: number }> {
      const attempts = await db
        .deleteFrom('sign_in_attempts')
        .where('expires_at', '<=', now)
        .executeTakeFirst();
      const sessions = await db
        .deleteFrom('portal_sessions')
        .where((where) => where.or([where('expires_at', '<=', now), where('ended_at', '<=', now)]))
        .executeTakeFirst();
      return { attempts: Number(attempts.numDeletedRows), sessions: Number(sessions.numDeletedRows) };
    },
  };
}
