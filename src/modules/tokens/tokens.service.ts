import type { Grant } from '../../platform/auth/grants.js';
import type { Authenticator, Principal } from '../../platform/auth/principal.js';
import type { TokenClaims, TokenCodec } from '../../platform/auth/token-codec.js';
import { type InvalidationFeed, watchingChangeMark } from '../../platform/cache/invalidation.js';
import { createKeptRecords } from '../../platform/cache/kept-records.js';
import { isDatabaseUnreachable } from '../../platform/db/availability.js';
import { afterCommit, type Executor, inTransaction } from '../../platform/db/transactions.js';
import { AppError, type ErrorKind, ErrorKinds } from '../../platform/errors.js';
import { claimsMatch, lifetimeWithin } from './token-rules.service.js';
import { createTokensRepository, type NewToken, type TokenRecord } from './tokens.repository.js';

export interface IssuedToken {
  readonly jti: string;
  readonly token: string;
  readonly expiresAt: Date;
}

export interface IssueOptions {
  /** The token's lifetime; TOKEN_TTL_SECONDS when not given. */
  readonly ttlSeconds?: number;
  /**
   * A transaction of the caller's to record the token in, so that the token exists only if the caller's
   * own writes commit (an application's approval and its credential, say).
   */
  readonly within?: Executor;
  /**
   * What the token is made from (an application key's id, a portal session's): ending it (`revokeKey`)
   * ends the token and its refreshes.
   */
  readonly keyId?: string;
  /**
   * When the chain ends (epoch ms; a portal session's end): the token and every refresh of it expire by
   * then, and none is refreshed after it. It must be at least a second after now (a caller's bug otherwise).
   */
  readonly endsAt?: number;
}

export interface TokensService extends Authenticator {
  /** A new token (the first of a new chain) for an owner with the given grants. */
  issue(owner: bigint, grants: readonly Grant[], options?: IssueOptions): Promise<IssuedToken>;
  /**
   * Exchanges a token, valid or expired within the refresh window, for a new one of the same owner and
   * grants. The old one is exchanged once: presented again within the grace after its exchange, it answers
   * the chain's current token, its successor unless that was exchanged too (two shards of one bot
   * refreshing at once); later, it revokes its whole chain.
   */
  refresh(token: string, expiresAt?: string): Promise<IssuedToken>;
  /**
   * Revokes every token made from an application key (`issue(..., { keyId })`) and refreshed from those;
   * how many chains it ended. With `within`, in the caller's transaction.
   */
  revokeKey(keyId: string, options?: { readonly within?: Executor }): Promise<number>;
  /**
   * Revokes the token's whole chain (the credential, whichever of its tokens is current); how many it
   * revoked. With `within`, in the caller's transaction (an application's revocation and its credential's).
   */
  revoke(jti: string, options?: { readonly within?: Executor }): Promise<number>;
  /**
   * Reads the database's mark of token changes, and drops the records kept in process when it moved (a
   * change no feed told of). Until it has been read once, no record is kept. Run it about every second.
   */
  checkForChanges(): Promise<void>;
}

/** What the tokens service needs of the configuration. */
export interface TokensSettings {
  readonly tokenTtlSeconds: number;
  /** How long after its expiry a token may still be exchanged at /auth/refresh. */
  readonly refreshWindowSeconds: number;
  /**
   * How long after a token's exchange presenting it again answers the same successor instead of revoking
   * its chain (0: reuse always revokes).
   */
  readonly refreshGraceSeconds: number;
  /** The most token records kept in process, and for how long at most (0: none kept). */
  readonly recordsKept: { readonly max: number; readonly forMs: number };
}

/**
 * How often the database's mark of token changes is read (`checkForChanges`): the longest a revocation no
 * feed told of (a publish that failed, the command line run without Redis, another instance on PostgreSQL
 * without Redis) goes unheard by an instance keeping records.
 */
export const TOKEN_CHANGES_CHECK_MS = 1000;
/** How far along a chain a token presented again within the grace is followed to the chain's current one. */
const MAX_GRACE_HOPS = 16;
/** Records kept are used only while the mark was read this recently (reads failing: the database is read). */
const TOKEN_CHANGES_TRUSTED_FOR_MS = 3 * TOKEN_CHANGES_CHECK_MS;

export interface TokensServiceDeps {
  readonly db: Executor;
  readonly codec: TokenCodec;
  readonly settings: TokensSettings;
  /**
   * How revocations reach every instance. With one, token records are kept in process between requests
   * (trusted only while it is); without, every request reads its token's record from the database.
   */
  readonly revocations?: InvalidationFeed;
  readonly now?: () => number;
}

const unauthorized = (kind: ErrorKind, developerReason: string) => AppError.of(kind, { developerReason });

export function createTokensService({
  db,
  codec,
  settings,
  revocations,
  now = Date.now,
}: TokensServiceDeps): TokensService {
  const repository = createTokensRepository(db);
  /** The principal each kept record was last found to be, with the claims it was checked against. */
  const principals = new WeakMap<TokenRecord, { claims: TokenClaims; principal: Principal }>();
  const feed =
    revocations &&
    watchingChangeMark(revocations, () => repository.changeMark(), TOKEN_CHANGES_TRUSTED_FOR_MS, {
      // The database out of this instance's reach: the kept records (of tokens it has seen) keep serving
      // reads while Redis's feed is trusted, since a revocation any instance still makes reaches this one
      // through it. Without Redis nothing would: the records then lapse as the mark's reads do. A database
      // that is only busy (this instance's pool exhausted) is no outage: it takes writes, the command line's
      // too, which may not publish.
      isOutage: isDatabaseUnreachable,
    });
  const records = createKeptRecords({
    feed,
    ...settings.recordsKept,
    load: (jti) => repository.find(jti),
    groupOf: (record: TokenRecord) => record.chainId,
  });

  async function sign(record: Pick<TokenRecord, 'owner' | 'grants'>, ttlSeconds: number, at = now()) {
    const signed = await codec.sign(record.owner, record.grants, ttlSeconds, at);
    return {
      ...signed,
      issued: { jti: signed.jti, token: signed.token, expiresAt: new Date(signed.claims.expiresAt * 1000) },
    };
  }

  /**
   * The record of the token whose claims these are, which must exist, say what the claims say (a token
   * signed with a leaked key but claiming another owner, expiry or grants is not the one issued), and not
   * be revoked.
   */
  async function usableRecord(
    claims: TokenClaims,
    find: (jti: string) => Promise<TokenRecord | undefined> = repository.find,
  ): Promise<TokenRecord> {
    const record = await find(claims.jti);
    if (!record) throw unauthorized(ErrorKinds.TOKEN_INVALID, 'the token was not issued by this service');
    if (!claimsMatch(claims, record)) {
      throw unauthorized(ErrorKinds.TOKEN_INVALID, 'the token does not say what was issued under its id');
    }
    if (record.revokedAt !== null) {
      throw unauthorized(
        ErrorKinds.TOKEN_REVOKED,
        'the token has been revoked: its key was rotated or revoked, its application revoked, the portal session ' +
          'that gave it ended, it was refreshed twice (reuse), or an operator revoked it; get a new one',
      );
    }
    return record;
  }

  /**
   * Revokes a chain, or every chain made from a key, through `executor`; every instance drops its records
   * of those chains once that commits. How many tokens it revoked, and which chains.
   */
  async function revokeTokens(
    executor: Executor,
    which: { readonly chainId: string } | { readonly keyId: string },
    reason: 'revoked' | 'reuse_detected',
  ) {
    const { revoked, chains } = await createTokensRepository(executor).revokeWhere(which, reason, now());
    const groups = 'chainId' in which ? [which.chainId] : chains;
    for (const chain of groups) records.drop(chain);
    await afterCommit(executor, async () => {
      await Promise.all(groups.map((chain) => records.changed(chain)));
    });
    return { revoked, chains: groups };
  }

  /**
   * Within the grace after a token's exchange, what presenting it again answers: the chain's current token
   * (its successor, or that one's successor if it was exchanged too, and so on), given again (signed again
   * from its record: tokens are never kept). Undefined when there is no grace, or it is over. 401
   * TOKEN_REVOKED when the chain was revoked meanwhile.
   */
  async function currentWithinGrace(record: TokenRecord): Promise<IssuedToken | undefined> {
    const graceMs = settings.refreshGraceSeconds * 1000;
    if (graceMs === 0 || record.rotatedAt === null || now() - record.rotatedAt > graceMs) return undefined;
    let current = record;
    for (let hops = 0; current.rotatedAt !== null; hops++) {
      const next = await repository.successorOf(current.jti);
      if (!next || hops >= MAX_GRACE_HOPS) return undefined;
      current = next;
    }
    if (current.revokedAt !== null) {
      throw unauthorized(ErrorKinds.TOKEN_REVOKED, "the token's chain has been revoked");
    }
    const claims: TokenClaims = {
      owner: current.owner,
      grants: current.grants,
      jti: current.jti,
      issuedAt: current.issuedAt / 1000,
      expiresAt: current.expiresAt / 1000,
    };
    return {
      jti: current.jti,
      token: await codec.signClaims(claims),
      expiresAt: new Date(current.expiresAt),
    };
  }

  async function reuseDetected(record: TokenRecord): Promise<never> {
    await revokeTokens(db, { chainId: record.chainId }, 'reuse_detected');
    throw unauthorized(
      ErrorKinds.TOKEN_REUSED,
      'this token was already exchanged; presenting it again revoked every token of its chain',
    );
  }

  return {
    async issue(owner, grants, { ttlSeconds = settings.tokenTtlSeconds, within, keyId, endsAt } = {}) {
      const at = now();
      const lifetime = lifetimeWithin(ttlSeconds, endsAt ?? null, at);
      if (lifetime === 0) throw new Error('a token was asked for a chain ending within a second');
      const { jti, claims, issued } = await sign({ owner, grants }, lifetime, at);
      await createTokensRepository(within ?? db).insert({
        jti,
        owner,
        grants,
        chainId: jti,
        rotatedFrom: null,
        keyId: keyId ?? null,
        chainEndsAt: endsAt ?? null,
        issuedAt: claims.issuedAt * 1000,
        expiresAt: claims.expiresAt * 1000,
      });
      return issued;
    },

    async refresh(token, expiresAt) {
      const claims = await codec.verify(token, {
        acceptExpiredForSeconds: settings.refreshWindowSeconds,
        now: now(),
      });
      if (expiresAt !== undefined && Date.parse(expiresAt) !== claims.expiresAt * 1000) {
        throw AppError.of(ErrorKinds.EXPIRES_AT_MISMATCH, {
          developerReason: `expires_at must be the token's expiry, ${new Date(claims.expiresAt * 1000).toISOString()}, or be left out`,
        });
      }
      const record = await usableRecord(claims);
      if (record.rotatedAt !== null) return (await currentWithinGrace(record)) ?? reuseDetected(record);
      const at = now();
      const lifetime = lifetimeWithin(settings.tokenTtlSeconds, record.chainEndsAt, at);
      if (lifetime === 0) {
        throw unauthorized(
          ErrorKinds.TOKEN_EXPIRED,
          `the token's chain ended at ${new Date(record.chainEndsAt ?? 0).toISOString()} (the portal session ` +
            'that gave it ended): get a new token',
        );
      }
      const { jti, claims: next, issued } = await sign(record, lifetime, at);
      const successor: NewToken = {
        jti,
        owner: record.owner,
        grants: record.grants,
        chainId: record.chainId,
        rotatedFrom: record.jti,
        keyId: record.keyId,
        chainEndsAt: record.chainEndsAt,
        issuedAt: next.issuedAt * 1000,
        expiresAt: next.expiresAt * 1000,
      };
      // Marking the old token rotated and recording its successor commit together, or not at all.
      const rotated = await inTransaction(db, async (transaction) => {
        const tokens = createTokensRepository(transaction);
        if (!(await tokens.markRotated(record.jti, now()))) return false;
        await tokens.insert(successor);
        return true;
      });
      if (rotated) return issued;
      // A concurrent request exchanged (or revoked) the token between our read and our update: within the
      // grace, its successor is this request's answer too.
      const current = await usableRecord(claims);
      return (await currentWithinGrace(current)) ?? reuseDetected(current);
    },

    revokeKey: async (keyId, { within } = {}) =>
      (await revokeTokens(within ?? db, { keyId }, 'revoked')).chains.length,

    async revoke(jti, { within } = {}) {
      const executor = within ?? db;
      const record = await createTokensRepository(executor).find(jti);
      return record ? (await revokeTokens(executor, { chainId: record.chainId }, 'revoked')).revoked : 0;
    },

    checkForChanges: async () => feed?.check(),

    async authenticate(token): Promise<Principal> {
      const claims = await codec.verify(token, { now: now() });
      // A kept record (revocations reach it); refresh and revoke read the database itself.
      const record = await records.find(claims.jti);
      // The same claims (the codec remembers a verified token's) checked against the same kept record
      // before: the same principal, without comparing them again.
      const known = record && principals.get(record);
      if (known?.claims === claims && record?.revokedAt === null) return known.principal;
      const usable = await usableRecord(claims, async () => record);
      const principal = {
        owner: usable.owner,
        grants: new Set(usable.grants),
        jti: usable.jti,
        expiresAt: usable.expiresAt,
      };
      principals.set(usable, { claims, principal });
      return principal;
    },
  };
}
