import { createHmac } from 'node:crypto';
import type { Grant } from '../../platform/auth/grants.js';
import type { GroupCommitSettings } from '../../platform/db/group-commit.js';
import { createRetainedWrites } from '../../platform/db/retained-writes.js';
import type { Executor } from '../../platform/db/transactions.js';
import { AppError, ErrorKinds, type FieldProblem, InputError } from '../../platform/errors.js';
import { parseJsonExact, serializeJson } from '../../platform/json.js';
import { type PageQuery, readPage } from '../../platform/pagination.js';
import { timeOrderedUuid } from '../../platform/time-ordered-id.js';
import {
  createInteractionsRepository,
  type LogRecord,
  type NewLogRow as NewLog,
} from './interactions.repository.js';

/** An interaction log as the bot sends it (the interface's InteractionLog), IDs exact. */
export interface InteractionLog {
  readonly interaction: {
    readonly interaction_name: string;
    readonly interaction_token: string;
    readonly interaction_type: string;
    readonly options?: Record<string, unknown>;
    readonly server_id?: bigint;
    readonly user_id: bigint;
  };
  readonly server?: { readonly server_id: bigint; readonly server_name?: string };
  readonly user: { readonly user_id: bigint; readonly username: string };
}

/** A log as kept: everything but the interaction token. */
export type StoredDocument = Omit<InteractionLog, 'interaction'> & {
  readonly interaction: Omit<InteractionLog['interaction'], 'interaction_token'>;
};

export interface StoredLog {
  readonly id: string;
  readonly receivedAt: number;
  /** The owner of the token that logged it. */
  readonly owner: bigint;
  readonly document: StoredDocument;
}

export interface LoggedInteraction extends StoredLog {
  /** The interaction was logged before: this is that first record, and nothing new was stored. */
  readonly duplicate: boolean;
}

export interface LogQuery extends PageQuery {
  /** Only this owner's logs: the reader's own unless it is an auditor (who reads every owner's without it). */
  readonly owner?: bigint;
  readonly userId?: bigint;
  readonly serverId?: bigint;
  readonly since?: number;
}

/** The grant that reads every owner's logs and chat-platform users (operators only). */
export const AUDIT_GRANT: Grant = 'messenger:audit';

/** Who reads: a token's owner, and whether the token reads every owner's data (AUDIT_GRANT). */
export interface Reader {
  readonly owner: bigint;
  readonly auditor: boolean;
}

/**
 * A reader may name only its own owner's data, unless it is an auditor: 403 NOT_RESOURCE_OWNER otherwise.
 * Messenger users follow the same rule for their per-owner views.
 */
export function ensureMayRead(reader: Reader, owner: bigint | undefined): void {
  if (reader.auditor || owner === undefined || owner === reader.owner) return;
  throw AppError.of(ErrorKinds.NOT_RESOURCE_OWNER, {
    developerReason: `without the ${AUDIT_GRANT} grant, owner must be the token's owner or be left out`,
    grant: AUDIT_GRANT,
  });
}

/** A page of logs, newest first. */
export interface LogPage {
  readonly logs: readonly StoredLog[];
  /** The stored documents' size: what reading them back and writing them out costs grows with it. */
  readonly bytes: number;
  /** Where the next page starts; undefined on the last page. */
  readonly nextCursor?: string;
}

export interface InteractionsService {
  /**
   * Stores the log with its receive time and the logging owner, and the user and server it mentions, in
   * one transaction (shared with the logs that arrive with it); resolves once committed. The same
   * interaction logged again by the same owner resolves to its first record and stores nothing.
   */
  log(owner: bigint, log: InteractionLog): Promise<LoggedInteraction>;
  /**
   * The Discord username the owner's logs last gave the user, if that owner logged them (another owner's
   * logs never count).
   */
  knownUsername(owner: bigint, userId: bigint): Promise<string | undefined>;
  /**
   * Newest first, a page at a time: the reader's own logs, or, for an auditor, every owner's (or the one
   * `query.owner` names). A reader naming another owner: 403; a cursor this service did not give: an
   * InputError on `cursor`.
   */
  list(reader: Reader, query: LogQuery): Promise<LogPage>;
  /** Deletes logs older than the retention, in bounded batches, until done or `stop`; how many it deleted. */
  deleteExpired(stop?: AbortSignal): Promise<number>;
  /** Commits every log already taken; takes no more. */
  close(): Promise<void>;
}

export interface InteractionsSettings {
  readonly retentionDays: number;
  readonly groupCommit: GroupCommitSettings;
}

export interface InteractionsServiceDeps {
  readonly db: Executor;
  /** The key of the interaction tokens' fingerprints (HMAC-SHA256); secret, stable across restarts. */
  readonly fingerprintKey: Buffer;
  readonly settings: InteractionsSettings;
  readonly now?: () => number;
}

type Written = { readonly record: LogRecord; readonly duplicate: boolean };

export function createInteractionsService({
  db,
  fingerprintKey,
  settings,
  now = Date.now,
}: InteractionsServiceDeps): InteractionsService {
  const repository = createInteractionsRepository(db);
  // The owner is part of what is fingerprinted: a repeat is the same interaction logged by the same owner,
  // and one owner's log never answers another's.
  const fingerprint = (owner: bigint, token: string) =>
    createHmac('sha256', fingerprintKey).update(`${owner}:${token}`).digest('base64url');
  const writes = createRetainedWrites<NewLog, Written>({
    db,
    write: writeBatch,
    groupCommit: settings.groupCommit,
    retentionDays: settings.retentionDays,
    deleteBefore: repository.deleteReceivedBefore,
    now,
  });

  return {
    async log(owner, log) {
      ensureConsistent(log);
      const { interaction_token: token, ...interaction } = log.interaction;
      const document: StoredDocument = { ...log, interaction };
      const receivedAt = now();
      const record: LogRecord = {
        // In time order, as the logs arrive: the key's index grows at its end.
        id: timeOrderedUuid(receivedAt),
        fingerprint: fingerprint(owner, token),
        receivedAt,
        owner,
        userId: log.user.user_id,
        serverId: log.interaction.server_id ?? log.server?.server_id ?? null,
        document: serializeJson(document),
      };
      const written = await writes.submit({
        record,
        username: log.user.username,
        serverName: log.server?.server_name ?? null,
      });
      return written.duplicate
        ? { ...storedLog(written.record), duplicate: true }
        : { id: record.id, receivedAt: record.receivedAt, owner, document, duplicate: false };
    },

    knownUsername: (owner, userId) => repository.usernameOf(owner, userId),

    async list(reader, { limit, cursor, owner, ...filter }) {
      ensureMayRead(reader, owner);
      const { items, nextCursor } = await readPage(
        { limit, cursor },
        (count, after) =>
          repository.list({ ...filter, owner: reader.auditor ? owner : reader.owner }, count, after),
        (row) => row.receivedAt,
      );
      const logs = items.map(storedLog);
      const bytes = items.reduce((sum, item) => sum + item.document.length, 0);
      return nextCursor ? { logs, bytes, nextCursor } : { logs, bytes };
    },

    deleteExpired: writes.deleteExpired,

    close: writes.close,
  };
}

/**
 * One batch's writes: each interaction not logged before goes in (the first of a batch's repeats), and
 * only those update the users and servers they mention. Every log of the batch answers with its
 * interaction's stored record.
 */
async function writeBatch(transaction: Executor, logs: readonly NewLog[]): Promise<Written[]> {
  const repository = createInteractionsRepository(transaction);
  // The first log of each interaction, in the batch's order (so the last sighting of a user is its latest).
  const byFingerprint = new Map<string, NewLog>();
  for (const log of logs)
    if (!byFingerprint.has(log.record.fingerprint)) byFingerprint.set(log.record.fingerprint, log);
  const firsts = [...byFingerprint.values()];
  const inserted = await repository.insertNew(firsts);
  const stored = new Map(
    firsts
      .filter((log) => inserted.has(log.record.fingerprint))
      .map(({ record }) => [record.fingerprint, record]),
  );
  // Logged before (by an earlier batch): answered with the first record.
  const repeats = firsts.filter((log) => !inserted.has(log.record.fingerprint));
  for (const [fingerprint, record] of await repository.findByFingerprints(
    repeats.map((log) => log.record.fingerprint),
  ))
    stored.set(fingerprint, record);
  return logs.map(({ record: { fingerprint, id } }) => {
    const record = stored.get(fingerprint);
    if (!record) throw new Error('a logged interaction is missing from its own transaction');
    return { record, duplicate: record.id !== id };
  });
}

/** A stored document is the service's own JSON: a corrupt one is the service's fault (a 500), not the caller's. */
const parseDocument = (json: string): StoredDocument => parseJsonExact(json) as StoredDocument;

function storedLog(record: LogRecord): StoredLog {
  return {
    id: record.id,
    receivedAt: record.receivedAt,
    owner: record.owner,
    document: reviveIds(parseDocument(record.document)),
  };
}

/** Stored IDs come back as numbers or bigints by size; the domain's IDs are bigints. */
function reviveIds(document: StoredDocument): StoredDocument {
  const id = (value: unknown) => BigInt(value as number | bigint);
  const { interaction, user, server } = document;
  return {
    interaction: {
      ...interaction,
      user_id: id(interaction.user_id),
      ...(interaction.server_id === undefined ? {} : { server_id: id(interaction.server_id) }),
    },
    user: { ...user, user_id: id(user.user_id) },
    ...(server ? { server: { ...server, server_id: id(server.server_id) } } : {}),
  };
}

/** The IDs a log gives twice must agree: the interaction's user is the log's user, and so for servers. */
function ensureConsistent(log: InteractionLog): void {
  const problems: FieldProblem[] = [];
  if (log.interaction.user_id !== log.user.user_id)
    problems.push({ field: ['user', 'user_id'], rule: 'must be interaction.user_id' });
  const serverId = log.interaction.server_id;
  if (log.server && serverId !== undefined && serverId !== log.server.server_id)
    problems.push({ field: ['server', 'server_id'], rule: 'must be interaction.server_id' });
  if (problems.length > 0) throw new InputError(problems);
}
