import { randomBytes, randomUUID } from 'node:crypto';
import { hashSecret } from '../../platform/auth/secret-hash.js';
import { type Executor, inTransaction } from '../../platform/db/transactions.js';
import { AppError, ErrorKinds } from '../../platform/errors.js';
import type { IssuedToken, TokensService } from '../tokens/tokens.service.js';
import {
  createApplicationKeysRepository,
  type KeyEndReason,
  type KeyRecord,
} from './application-keys.repository.js';
import { type ApplicationRecord, createApplicationsRepository } from './applications.repository.js';

export type { KeyEndReason, KeyRecord };

/** What an application key looks like: `pds_` and 43 characters of base64url (256 random bits). */
export const KEY_PATTERN = '^pds_[A-Za-z0-9_-]{43}$';
const KEY_PREFIX = 'pds_';

/** Where an application's key stands, as its owner and reviewers see it. */
export type KeyStatus =
  | { readonly state: 'uncollected'; readonly madeAt: number }
  | {
      readonly state: 'active';
      readonly madeAt: number;
      readonly collectedAt: number;
      readonly lastUsedAt: number | null;
    }
  | {
      readonly state: 'ended';
      readonly madeAt: number;
      /** When its owner had collected it; null if it ended uncollected. */
      readonly collectedAt: number | null;
      readonly endedAt: number;
      readonly reason: KeyEndReason;
    };

export interface CollectedKey {
  /** The key's secret: shown this once, stored nowhere. */
  readonly key: string;
  readonly status: KeyStatus;
}

export interface ApplicationKeysService {
  /** The key of an approved application, collected once by its owner (409 after that). */
  collect(owner: bigint, applicationId: string): Promise<CollectedKey>;
  /** Ends the current key, and every token made from it, and makes and returns the next (owner only). */
  rotate(owner: bigint, applicationId: string): Promise<CollectedKey>;
  /** Ends the current key and every token made from it; rotate makes a new one (owner only). */
  revoke(owner: bigint, applicationId: string): Promise<KeyStatus>;
  /** A new token for the key's application, with its grants (`POST /auth/token`); 401 for a bad key. */
  exchange(key: string): Promise<IssuedToken>;
}

export interface ApplicationKeysServiceDeps {
  readonly db: Executor;
  readonly tokens: Pick<TokensService, 'issue' | 'revoke' | 'revokeKey'>;
  readonly now?: () => number;
}

const newKey = (): string => KEY_PREFIX + randomBytes(32).toString('base64url');

/**
 * Makes an approved application's first key, not collected (in the approval's transaction): nothing
 * secret exists until the owner collects it.
 */
export async function makeKey(transaction: Executor, applicationId: string, now: number): Promise<void> {
  await createApplicationKeysRepository(transaction).insert({ id: randomUUID(), applicationId, madeAt: now });
}

/**
 * Ends every key of the application that has not ended, and every token made from them (in the
 * revocation's transaction).
 */
export async function endKeys(
  transaction: Executor,
  tokens: Pick<TokensService, 'revokeKey'>,
  applicationId: string,
  reason: KeyEndReason,
  now: number,
): Promise<void> {
  const keys = createApplicationKeysRepository(transaction);
  for (const id of await keys.unended(applicationId)) {
    await keys.end(id, reason, now);
    await tokens.revokeKey(id, { within: transaction });
  }
}

/** Where the application's key stands, read through `executor`; null before approval. */
export async function keyStatusOf(executor: Executor, applicationId: string): Promise<KeyStatus | null> {
  return statusOfKey(await createApplicationKeysRepository(executor).newest(applicationId));
}

function statusOfKey(key: KeyRecord | undefined): KeyStatus | null {
  if (!key) return null;
  if (key.endedAt !== null)
    return {
      state: 'ended',
      madeAt: key.madeAt,
      collectedAt: key.collectedAt,
      endedAt: key.endedAt,
      reason: key.endedReason ?? 'revoked',
    };
  if (key.collectedAt === null) return { state: 'uncollected', madeAt: key.madeAt };
  return { state: 'active', madeAt: key.madeAt, collectedAt: key.collectedAt, lastUsedAt: key.lastUsedAt };
}

export function createApplicationKeysService({
  db,
  tokens,
  now = Date.now,
}: ApplicationKeysServiceDeps): ApplicationKeysService {
  /** The caller's approved application, in `transaction` (404 unknown, 403 not theirs, 409 not approved). */
  async function ownApproved(transaction: Executor, owner: bigint, id: string): Promise<ApplicationRecord> {
    const applications = createApplicationsRepository(transaction);
    // The application's changes and its key's take turns: two rotations at once, say, or a rotation
    // and the application's revocation, never leave two keys that have not ended.
    await applications.lock(id);
    const application = await applications.find(id);
    if (!application) {
      throw AppError.of(ErrorKinds.APPLICATION_NOT_FOUND, {
        developerReason: `there is no application ${id}`,
      });
    }
    if (application.owner !== owner) {
      throw AppError.of(ErrorKinds.NOT_APPLICATION_OWNER, {
        developerReason: "only the application's owner may collect, rotate or revoke its key",
      });
    }
    if (application.state !== 'approved') {
      throw AppError.of(ErrorKinds.KEY_NOT_AVAILABLE, {
        developerReason: `the application is ${application.state}: only an approved application has a key`,
      });
    }
    return application;
  }

  /**
   * An application approved before keys existed got a token chain on approval (its credential): rotating
   * or revoking the key ends that chain too, so that its owner can stop every token of the application.
   */
  async function endCredential(transaction: Executor, application: ApplicationRecord): Promise<void> {
    if (application.credentialJti) await tokens.revoke(application.credentialJti, { within: transaction });
  }

  return {
    async collect(owner, applicationId) {
      return inTransaction(db, async (transaction) => {
        await ownApproved(transaction, owner, applicationId);
        const keys = createApplicationKeysRepository(transaction);
        const current = await keys.newest(applicationId);
        if (!current) throw noKeyYet();
        const key = newKey();
        const at = now();
        if (current.endedAt !== null || !(await keys.collect(current.id, hashSecret(key), at))) {
          throw AppError.of(ErrorKinds.KEY_ALREADY_COLLECTED, {
            developerReason:
              current.endedAt !== null
                ? 'the key was revoked: rotate it (POST .../key/rotate) to make a new one'
                : 'the key is collected once; if it is lost, rotate it (POST .../key/rotate): that ends the old one',
          });
        }
        return {
          key,
          status: { state: 'active', madeAt: current.madeAt, collectedAt: at, lastUsedAt: null },
        };
      });
    },

    async rotate(owner, applicationId) {
      return inTransaction(db, async (transaction) => {
        const application = await ownApproved(transaction, owner, applicationId);
        const at = now();
        await endKeys(transaction, tokens, applicationId, 'rotated', at);
        await endCredential(transaction, application);
        const key = newKey();
        await createApplicationKeysRepository(transaction).insert({
          id: randomUUID(),
          applicationId,
          madeAt: at,
          hash: hashSecret(key),
        });
        return { key, status: { state: 'active', madeAt: at, collectedAt: at, lastUsedAt: null } };
      });
    },

    async revoke(owner, applicationId) {
      return inTransaction(db, async (transaction) => {
        const application = await ownApproved(transaction, owner, applicationId);
        await endKeys(transaction, tokens, applicationId, 'revoked', now());
        const status = await keyStatusOf(transaction, applicationId);
        if (!status) throw noKeyYet();
        await endCredential(transaction, application);
        return status;
      });
    },

    async exchange(key) {
      const found = await createApplicationKeysRepository(db).findByHash(hashSecret(key));
      if (!found) throw keyInvalid('the key was never issued by this service');
      if (found.endedAt !== null) throw keyInvalid(endedReason(found));
      return inTransaction(db, async (transaction) => {
        const at = now();
        // Marking the key used holds its row until the token is recorded: a rotation or revocation at the
        // same moment either ends this token too, or ended the key first (and this is a 401).
        if (!(await createApplicationKeysRepository(transaction).use(found.id, at)))
          throw keyInvalid('the key has ended');
        const application = await createApplicationsRepository(transaction).find(found.applicationId);
        if (application?.state !== 'approved')
          throw keyInvalid(`the application is ${application?.state ?? 'gone'}`);
        return tokens.issue(application.owner, application.grants, { keyId: found.id, within: transaction });
      });
    },
  };
}

function endedReason(key: KeyRecord): string {
  const at = new Date(key.endedAt ?? 0).toISOString();
  switch (key.endedReason) {
    case 'rotated':
      return `the key was rotated at ${at}: use the key the rotation gave`;
    case 'application_revoked':
      return `the application was revoked at ${at}`;
    default:
      return `the key was revoked at ${at}: its owner can make a new one by rotating it`;
  }
}

/** An approved application without a key: approved before keys existed. Rotating makes its first. */
const noKeyYet = (): AppError =>
  AppError.of(ErrorKinds.KEY_NOT_AVAILABLE, {
    developerReason:
      'the application was approved before applications had keys: rotate (POST .../key/rotate) to make its first key',
  });

const keyInvalid = (developerReason: string): AppError =>
  AppError.of(ErrorKinds.KEY_INVALID, { developerReason });
