import { randomUUID } from 'node:crypto';
import { type Grant, isOperatorGrant, OPERATOR_GRANTS } from '../../platform/auth/grants.js';
import { type Executor, inTransaction } from '../../platform/db/transactions.js';
import { AppError, type ErrorKind, ErrorKinds, InputError } from '../../platform/errors.js';
import { type PageQuery, readPage } from '../../platform/pagination.js';
import type { TokensService } from '../tokens/tokens.service.js';
import { endKeys, type KeyStatus, keyStatusOf, makeKey } from './application-keys.service.js';
import {
  type ApplicationRecord,
  type ApplicationState,
  createApplicationsRepository,
  type ListFilter,
  type TransitionRecord,
} from './applications.repository.js';

export { APPLICATION_STATES } from './applications.repository.js';
export type { ApplicationRecord, ApplicationState, TransitionRecord };

/** The one table of allowed changes: from each state, the states it may move to. */
export const NEXT_STATES: Readonly<Record<ApplicationState, readonly ApplicationState[]>> = {
  pending: ['approved', 'rejected', 'withdrawn'],
  approved: ['revoked'],
  rejected: [],
  withdrawn: [],
  revoked: [],
};

/** What each action does, and who may take it. */
const ACTIONS = {
  approve: { to: 'approved', by: 'reviewer' },
  reject: { to: 'rejected', by: 'reviewer' },
  revoke: { to: 'revoked', by: 'reviewer' },
  withdraw: { to: 'withdrawn', by: 'owner' },
} as const satisfies Record<string, { to: ApplicationState; by: 'reviewer' | 'owner' }>;

export type ApplicationAction = keyof typeof ACTIONS;

/**
 * Who acts: the owner of a token (a reviewer when it carries `applications:review`), or an operator at
 * the command line, who may do what a reviewer may.
 */
export type Actor =
  | { readonly kind: 'token'; readonly owner: bigint; readonly reviewer: boolean }
  | { readonly kind: 'operator' };

export interface NewApplication {
  readonly name: string;
  readonly description: string;
  readonly grants: readonly Grant[];
  /** The owner the request named, if it named one: it must be the applicant. */
  readonly claimedOwner?: bigint;
}

export interface ApplicationDetail extends ApplicationRecord {
  /** Every state it has been in, oldest first; the first entry is its creation. */
  readonly history: readonly TransitionRecord[];
  /** Where its key stands; null before approval (and for an application approved before keys existed). */
  readonly key: KeyStatus | null;
}

/** Which applications, and which page of them (`cursor`: a `nextCursor` of an earlier page). */
export interface ListQuery extends ListFilter, PageQuery {}

export interface ApplicationsPage {
  readonly applications: readonly ApplicationRecord[];
  /** Where the next page starts; undefined on the last page. */
  readonly nextCursor?: string;
}

export interface ApplicationsService {
  /** A new pending application of `owner`'s (409 beyond the pending limit). */
  apply(owner: bigint, application: NewApplication): Promise<ApplicationRecord>;
  /**
   * Newest first, a page at a time. A token without the review grant sees its owner's applications only; a
   * cursor this service did not give: an InputError on `cursor`.
   */
  list(actor: Actor, query: ListQuery): Promise<ApplicationsPage>;
  /** One application with its history: for a reviewer, an operator or its owner. */
  get(actor: Actor, id: string): Promise<ApplicationDetail>;
  /**
   * Moves the application through NEXT_STATES. Approval makes its key (for its owner to collect: nothing
   * secret is in the answer); revocation ends the key and every token made from it, in the same
   * transaction as the change. 404 unknown, 403 not the actor's to take, 409 not allowed now.
   */
  transition(
    actor: Actor,
    id: string,
    action: ApplicationAction,
    reason?: string,
  ): Promise<ApplicationDetail>;
}

export interface ApplicationsSettings {
  /** How many pending applications one owner may have at once. */
  readonly maxPendingPerOwner: number;
}

export interface ApplicationsServiceDeps {
  readonly db: Executor;
  readonly tokens: Pick<TokensService, 'revoke' | 'revokeKey'>;
  readonly settings: ApplicationsSettings;
  readonly now?: () => number;
}

export function createApplicationsService({
  db,
  tokens,
  settings,
  now = Date.now,
}: ApplicationsServiceDeps): ApplicationsService {
  const repository = createApplicationsRepository(db);

  async function detail(executor: Executor, record: ApplicationRecord): Promise<ApplicationDetail> {
    const [history, key] = await Promise.all([
      createApplicationsRepository(executor).history(record.id),
      keyStatusOf(executor, record.id),
    ]);
    return { ...record, history, key };
  }

  async function found(executor: Executor, id: string): Promise<ApplicationRecord> {
    const record = await createApplicationsRepository(executor).find(id);
    if (!record) {
      throw AppError.of(ErrorKinds.APPLICATION_NOT_FOUND, {
        developerReason: `there is no application ${id}`,
      });
    }
    return record;
  }

  return {
    async apply(owner, { name, description, grants, claimedOwner }) {
      if (claimedOwner !== undefined && claimedOwner !== owner) {
        throw new InputError([
          {
            kind: ErrorKinds.OWNER_MISMATCH,
            field: ['owner'],
            rule: "must be the access token's owner, or be left out",
            developerRule: `must be the token's owner, ${owner}, or be left out`,
          },
        ]);
      }
      refuseOperatorGrants(grants);
      const at = now();
      const record: ApplicationRecord = {
        id: randomUUID(),
        owner,
        name,
        description,
        grants,
        appliedAt: at,
        state: 'pending',
        credentialJti: null,
      };
      return inTransaction(db, async (transaction) => {
        const applications = createApplicationsRepository(transaction);
        await applications.claimOwner(owner, at);
        const pending = await applications.countInState(owner, 'pending');
        if (pending >= settings.maxPendingPerOwner) {
          throw AppError.of(ErrorKinds.TOO_MANY_PENDING_APPLICATIONS, {
            developerReason: `an owner may have at most ${settings.maxPendingPerOwner} pending applications; this one has ${pending}`,
          });
        }
        await applications.insert(record);
        await applications.addTransition(record.id, {
          from: null,
          to: 'pending',
          actor: owner.toString(),
          at,
          reason: null,
        });
        return record;
      });
    },

    async list(actor, { limit, cursor, ...filter }) {
      const only = restrictedTo(actor);
      if (only !== undefined && filter.owner !== undefined && filter.owner !== only) {
        throw forbidden(
          ErrorKinds.NOT_RESOURCE_OWNER,
          "without the applications:review grant, owner must be the token's owner or be left out",
          REVIEW,
        );
      }
      const { items, nextCursor } = await readPage(
        { limit, cursor },
        (count, after) => repository.list({ state: filter.state, owner: only ?? filter.owner }, count, after),
        (row) => row.appliedAt,
      );
      return nextCursor ? { applications: items, nextCursor } : { applications: items };
    },

    async get(actor, id) {
      const record = await found(db, id);
      const only = restrictedTo(actor);
      if (only !== undefined && only !== record.owner) {
        throw forbidden(
          ErrorKinds.NOT_RESOURCE_OWNER,
          "only the application's owner, or a token with the applications:review grant, may read it",
          REVIEW,
        );
      }
      return detail(db, record);
    },

    async transition(actor, id, action, reason) {
      const { to, by } = ACTIONS[action];
      return inTransaction(db, async (transaction) => {
        const applications = createApplicationsRepository(transaction);
        // The application's changes and its key's take turns (application-keys.service.ts).
        await applications.lock(id);
        const current = await found(transaction, id);
        ensureMayAct(actor, current, action, by);
        ensureAllowed(current.state, to);
        const at = now();
        if (!(await applications.changeState(id, current.state, to))) {
          // Another change won between our read and our update: say where the application is now.
          throw stateConflict((await found(transaction, id)).state, to);
        }
        if (action === 'approve') await makeKey(transaction, id, at);
        if (action === 'revoke') {
          await endKeys(transaction, tokens, id, 'application_revoked', at);
          // An application approved before keys existed was given a token chain on approval.
          if (current.credentialJti) await tokens.revoke(current.credentialJti, { within: transaction });
        }
        await applications.addTransition(id, {
          from: current.state,
          to,
          actor: actor.kind === 'operator' ? 'operator' : actor.owner.toString(),
          at,
          reason: reason ?? null,
        });
        return detail(transaction, { ...current, state: to });
      });
    },
  };
}

const REVIEW: Grant = 'applications:review';

/** A refusal of the actor, naming the grant that would allow what was refused, when one would. */
const forbidden = (kind: ErrorKind, developerReason: string, grant?: Grant): AppError =>
  AppError.of(kind, { developerReason, grant });

/** The owner whose applications alone the actor may see; undefined for a reviewer or an operator. */
const restrictedTo = (actor: Actor): bigint | undefined =>
  actor.kind === 'token' && !actor.reviewer ? actor.owner : undefined;

function ensureMayAct(
  actor: Actor,
  application: ApplicationRecord,
  action: ApplicationAction,
  by: 'reviewer' | 'owner',
): void {
  if (by === 'owner') {
    if (actor.kind === 'token' && actor.owner === application.owner) return;
    throw forbidden(ErrorKinds.NOT_APPLICATION_OWNER, `only the application's owner may ${action} it`);
  }
  if (restrictedTo(actor) !== undefined) {
    throw forbidden(
      ErrorKinds.GRANT_MISSING,
      `to ${action} an application needs the ${REVIEW} grant`,
      REVIEW,
    );
  }
  if (action === 'approve' && actor.kind === 'token' && actor.owner === application.owner) {
    throw forbidden(
      ErrorKinds.OWN_APPLICATION_REVIEW,
      'another reviewer, or an operator at the command line, must approve this application',
    );
  }
  // An application made before the tiers existed may ask for an operator's grant: a reviewer's approval
  // would hand it out, so only the command line may approve it.
  const operatorOnly = application.grants.filter(isOperatorGrant);
  if (action === 'approve' && actor.kind === 'token' && operatorOnly.length > 0) {
    throw AppError.of(ErrorKinds.OPERATOR_ONLY_GRANT, {
      forbidden: true,
      reason: 'This application asks for a grant only an operator gives; an operator must approve it.',
      developerReason: `the application asks for ${operatorOnly.join(', ')}, which only an operator gives: approve it with the command line (applications approve <id>)`,
    });
  }
}

/** An InputError OPERATOR_ONLY_GRANT naming each operator-only grant asked for, if any. */
function refuseOperatorGrants(grants: readonly Grant[]): void {
  const operatorOnly = grants.filter(isOperatorGrant);
  if (operatorOnly.length === 0) return;
  throw new InputError([
    {
      kind: ErrorKinds.OPERATOR_ONLY_GRANT,
      reason: `${operatorOnly.join(', ')} can only be given by an operator, not asked for in an application`,
      developerReason: `grants ${operatorOnly.join(', ')}: only an operator gives ${OPERATOR_GRANTS.join(', ')}; remove ${operatorOnly.length === 1 ? 'it' : 'them'} from the application`,
    },
  ]);
}

/** 409 unless NEXT_STATES lets `from` move to `to`. */
function ensureAllowed(from: ApplicationState, to: ApplicationState): void {
  if (!NEXT_STATES[from].includes(to)) throw stateConflict(from, to);
}

/** The 409 of a change the application's state does not allow, naming the state and the ones it allows. */
function stateConflict(from: ApplicationState, to: ApplicationState): AppError {
  const next = NEXT_STATES[from];
  return AppError.of(ErrorKinds.APPLICATION_STATE_CONFLICT, {
    reason: `The application is ${from}; it cannot become ${to}.`,
    developerReason:
      next.length === 0
        ? `the application is ${from}, a final state: it allows no further change`
        : `the application is ${from}; from ${from} it can only become ${next.join(' or ')}`,
  });
}
