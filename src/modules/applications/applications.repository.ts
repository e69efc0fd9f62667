import type { Grant } from '../../platform/auth/grants.js';
import { newestFirst } from '../../platform/db/keyset-page.js';
import { tablesOf } from '../../platform/db/repository-view.js';
import type { Executor } from '../../platform/db/transactions.js';
import type { PagePosition } from '../../platform/pagination.js';
import type { ApplicationsTable, ApplicationsTables } from './applications.tables.js';

export const APPLICATION_STATES = ['pending', 'approved', 'rejected', 'withdrawn', 'revoked'] as const;
export type ApplicationState = (typeof APPLICATION_STATES)[number];

export interface ApplicationRecord {
  readonly id: string;
  readonly owner: bigint;
  readonly name: string;
  readonly description: string;
  readonly grants: readonly Grant[];
  readonly appliedAt: number;
  readonly state: ApplicationState;
  readonly credentialJti: string | null;
}

export interface TransitionRecord {
  readonly from: ApplicationState | null;
  readonly to: ApplicationState;
  /** The Discord ID of whoever made the change (decimal digits), or `operator`. */
  readonly actor: string;
  readonly at: number;
  readonly reason: string | null;
}

export interface ListFilter {
  readonly state?: ApplicationState;
  readonly owner?: bigint;
}

/**
 * All SQL about developer applications, run on `executor`: the database, or a transaction the service
 * started. Times are epoch milliseconds.
 */
export function createApplicationsRepository(executor: Executor) {
  const db = tablesOf<ApplicationsTables>(executor);
  return {
    /**
     * Writes the owner's row: until the transaction ends, the owner's other applications wait here (a row
     * lock on PostgreSQL, the one writer on SQLite), so what the transaction counts stays true.
     */
    async claimOwner(owner: bigint, now: number): Promise<void> {
      await db
        .insertInto('application_owners')
        .values({ owner: owner.toString(), last_applied_at: now })
        .onConflict((conflict) => conflict.column('owner').doUpdateSet({ last_applied_at: now }))
        .execute();
    },

    async countInState(owner: bigint, state: ApplicationState): Promise<number> {
      const row = await db
        .selectFrom('applications')
        .select((select) => select.fn.countAll<number | string>().as('count'))
        .where('owner', '=', owner.toString())
        .where('state', '=', state)
        .executeTakeFirstOrThrow();
      return Number(row.count);
    },

    async insert(application: ApplicationRecord): Promise<void> {
      await db
        .insertInto('applications')
        .values({
          id: application.id,
          owner: application.owner.toString(),
          name: application.name,
          description: application.description,
          grants: application.grants.join(' '),
          applied_at: application.appliedAt,
          state: application.state,
          credential_jti: application.credentialJti,
        })
        .execute();
    },

    /**
     * Writes the application's row without changing it: until the transaction ends, every other change of
     * the application or its key waits here (a row lock on PostgreSQL, the one writer on SQLite).
     */
    async lock(id: string): Promise<void> {
      await db.updateTable('applications').set({ id }).where('id', '=', id).execute();
    },

    async find(id: string): Promise<ApplicationRecord | undefined> {
      const row = await db.selectFrom('applications').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toRecord(row);
    },

    /**
     * Moves the application from `from` to `to` if it is still in `from`; true when this call did. Of any
     * number of concurrent callers, at most one gets true (one conditional update).
     */
    async changeState(id: string, from: ApplicationState, to: ApplicationState): Promise<boolean> {
      const updated = await db
        .updateTable('applications')
        .set({ state: to })
        .where('id', '=', id)
        .where('state', '=', from)
        .executeTakeFirst();
      return updated.numUpdatedRows === 1n;
    },

    /** Records a change of state as the application's next history entry. */
    async addTransition(id: string, transition: TransitionRecord): Promise<void> {
      const last = await db
        .selectFrom('application_transitions')
        .select((select) => select.fn.max('seq').as('seq'))
        .where('application_id', '=', id)
        .executeTakeFirst();
      await db
        .insertInto('application_transitions')
        .values({
          application_id: id,
          seq: Number(last?.seq ?? 0) + 1,
          from_state: transition.from,
          to_state: transition.to,
          actor: transition.actor,
          at: transition.at,
          reason: transition.reason,
        })
        .execute();
    },

    /** The application's history, oldest first. */
    async history(id: string): Promise<TransitionRecord[]> {
      const rows = await db
        .selectFrom('application_transitions')
        .selectAll()
        .where('application_id', '=', id)
        .orderBy('seq')
        .execute();
      return rows.map((row) => ({
        from: row.from_state as ApplicationState | null,
        to: row.to_state as ApplicationState,
        actor: row.actor,
        at: Number(row.at),
        reason: row.reason,
      }));
    },

    /** Up to `limit` applications, newest first (applied_at, then id), after `position` when given. */
    async list(filter: ListFilter, limit: number, position?: PagePosition): Promise<ApplicationRecord[]> {
      let query = db.selectFrom('applications').selectAll();
      if (filter.state) query = query.where('state', '=', filter.state);
      if (filter.owner !== undefined) query = query.where('owner', '=', filter.owner.toString());
      const rows = await newestFirst(query, { at: 'applied_at', id: 'id' }, limit, position).execute();
      return rows.map(toRecord);
    },
  };
}

function toRecord(row: ApplicationsTable): ApplicationRecord {
  return {
    id: row.id,
    owner: BigInt(row.owner),
    name: row.name,
    description: row.description,
    grants: row.grants.split(' ').filter(Boolean) as Grant[],
    appliedAt: Number(row.applied_at),
    state: row.state as ApplicationState,
    credentialJti: row.credential_jti,
  };
}
