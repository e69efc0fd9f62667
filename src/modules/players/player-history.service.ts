import { deleteInBatches } from '../../platform/db/batched-delete.js';
import { type Executor, inTransaction } from '../../platform/db/transactions.js';
import { AppError, ErrorKinds } from '../../platform/errors.js';
import { parseJsonExact, stringifyExact } from '../../platform/json.js';
import { diffJson, type ParsedChanges, valueAfterChanges } from '../../platform/json-changes.js';
import { DAY_MS } from '../../platform/utc-day.js';
import {
  DEFAULT_HISTORY_POINTS,
  DEFAULT_SESSIONS,
  fieldsOf,
  type HistoryPoint,
  type HistoryQuery,
  type HistoryRequest,
  rangeOf,
  type SessionsRequest,
  thinnedSeqs,
} from './history-request.service.js';
import {
  compressChanges,
  compressFull,
  digestOf,
  documentsOf,
  FULL_COPY_FACTOR,
  NO_CHANGES,
  type ReadMeter,
  readFull,
} from './history-snapshots.service.js';
import {
  createPlayerHistoryRepository,
  type HistoryHead,
  type HistoryRow,
  monthStart,
  nextMonthStart,
} from './player-history.repository.js';
import { numericChanges, type Session, timeAt } from './player-sessions.service.js';

/*
 * A player's history: a snapshot per fetch that found the player changed, kept compactly. A snapshot is
 * either a full copy of the player (Brotli) or the changes from the latest full copy to it (json-changes.ts,
 * raw DEFLATE): a typical game changes a few dozen values, some hundred bytes, against a full copy of
 * about a third of the player's size. Changes are against the full copy, not the previous snapshot, so any
 * snapshot is read from two rows, whatever the number stored: a history read costs what it returns.
 *
 * A new full copy is written when the changes, kept up since the last one, would cost more than it: when
 * the latest changes' size times the snapshots since the full copy reaches twice the full copy's size
 * (that keeps the bytes stored per snapshot near their least, sqrt(2 x full x change)), and at the first
 * snapshot of each UTC month, so that a month stands alone (retention removes whole months).
 */

/** How many snapshots the sessions reader takes from the database at a time, and at most in all. */
const SESSION_PAGE = 200;
export const MAX_SESSION_SNAPSHOTS = 5000;

export interface HistorySettings {
  /** How many days of snapshots are kept (whole UTC months are removed once all of their days are older). */
  readonly retentionDays: number;
}

/** What a read cost, for its charge: the snapshots it went through, and the bytes of the full copies it parsed. */
export interface ReadCost {
  readonly snapshotsRead: number;
  readonly fullCopyBytes: number;
}

export interface PlayerHistoryService {
  /**
   * The history of the player `player` names (resolved as `uuidOf` does, for `owner`): the values of the
   * fields at each snapshot in the range, oldest first, evenly thinned to the limit. Throws an InputError
   * for bad fields or a range that ends before it starts, 404 PLAYER_NOT_FOUND when no snapshot of the
   * player was ever stored.
   */
  historyOf(
    player: string,
    request: HistoryRequest,
    owner: bigint,
  ): Promise<{ uuid: string; fields: readonly string[]; points: HistoryPoint[] } & ReadCost>;
  /** The player's sessions in the range, newest first; throws as `historyOf`. */
  sessionsOf(
    player: string,
    request: SessionsRequest,
    owner: bigint,
  ): Promise<{ uuid: string; sessions: Session[] } & ReadCost>;
  /**
   * Stores a snapshot of the player fetched at `at` for `owner`, in `within` (the fetch's transaction),
   * unless it equals their latest one. Whether it stored one.
   */
  record(within: Executor, uuid: string, json: string, at: number, owner: bigint | null): Promise<boolean>;
  /** The snapshots from `from` to `to`, oldest first, evenly thinned to `limit`; undefined: none ever stored. */
  points(uuid: string, query: HistoryQuery): Promise<({ points: HistoryPoint[] } & ReadCost) | undefined>;
  /**
   * The sessions the snapshots from `from` to `to` show, newest first, up to `limit`, read from at most
   * MAX_SESSION_SNAPSHOTS snapshots. Undefined as `points`.
   */
  sessions(
    uuid: string,
    range: { from: number; to: number; limit: number },
  ): Promise<({ sessions: Session[] } & ReadCost) | undefined>;
  /** Makes the coming months' partitions (PostgreSQL); the months it could not make, as first milliseconds. */
  prepareMonths(): Promise<number[]>;
  /** Removes the months past the retention, until done or `stop`; how many snapshots or partitions. */
  deleteExpired(stop?: AbortSignal): Promise<number>;
}

const noHistory = (uuid: string) =>
  AppError.of(ErrorKinds.PLAYER_NOT_FOUND, {
    reason: 'No history of this player is kept yet.',
    developerReason: `no snapshot of ${uuid} is stored: the service keeps a player's history from their first lookup (GET /player/{player}) on`,
  });

export function createPlayerHistoryService({
  db,
  settings,
  uuidOf,
  now = Date.now,
}: {
  readonly db: Executor;
  readonly settings: HistorySettings;
  /** Resolves a UUID or username (players.service.ts `uuidOf`). */
  readonly uuidOf: (player: string, owner: bigint) => Promise<string>;
  readonly now?: () => number;
}): PlayerHistoryService {
  const repository = createPlayerHistoryRepository(db);

  const service: PlayerHistoryService = {
    async historyOf(player, request, owner) {
      const fields = fieldsOf(request.fields);
      const range = rangeOf(request, now());
      const uuid = await uuidOf(player, owner);
      const read = await service.points(uuid, {
        fields,
        ...range,
        limit: request.limit ?? DEFAULT_HISTORY_POINTS,
      });
      if (!read) throw noHistory(uuid);
      return { uuid, fields: fields.map(({ pointer }) => pointer), ...read };
    },

    async sessionsOf(player, request, owner) {
      const range = rangeOf(request, now());
      const uuid = await uuidOf(player, owner);
      const read = await service.sessions(uuid, { ...range, limit: request.limit ?? DEFAULT_SESSIONS });
      if (!read) throw noHistory(uuid);
      return { uuid, ...read };
    },

    async record(within, uuid, json, fetchedAt, owner) {
      return inTransaction(within, async (transaction) => {
        const history = createPlayerHistoryRepository(transaction);
        const head = await history.lockHead(uuid);
        const at = head.seq > 0 ? Math.max(fetchedAt, head.at + 1) : fetchedAt;
        const seq = head.seq + 1;
        const baseRow = head.seq > 0 ? await history.row(uuid, head.baseSeq, head.baseAt) : undefined;
        if (baseRow) {
          const changesText = stringifyExact(diffJson(readFull(baseRow), parseJsonExact(json)));
          const digest = digestOf(changesText);
          if (digest === head.digest) return false;
          const body = compressChanges(changesText);
          const sinceBase = head.sinceBase + 1;
          const sameMonth = monthStart(head.baseAt) === monthStart(at);
          if (sameMonth && body.length * sinceBase < FULL_COPY_FACTOR * head.baseBytes) {
            await history.insert(uuid, { seq, at, baseSeq: head.baseSeq, body }, owner);
            await history.setHead(uuid, { ...head, seq, at, sinceBase, changesBytes: body.length, digest });
            return true;
          }
        }
        const body = compressFull(json);
        await history.insert(uuid, { seq, at, baseSeq: seq, body }, owner);
        const next: HistoryHead = {
          seq,
          at,
          baseSeq: seq,
          baseAt: at,
          baseBytes: body.length,
          sinceBase: 0,
          changesBytes: 0,
          digest: digestOf(NO_CHANGES),
        };
        await history.setHead(uuid, next);
        return true;
      });
    },

    async points(uuid, { fields, from, to, limit }) {
      if (!(await repository.head(uuid))) return undefined;
      const range = await repository.seqRange(uuid, from, to);
      if (!range) return { points: [], snapshotsRead: 0, fullCopyBytes: 0 };
      const rows = await repository.rows(uuid, thinnedSeqs(range.first, range.last, limit));
      const meter: ReadMeter = { fullCopyBytes: 0 };
      const points = (await documentsOf(repository, uuid, rows, meter)).map(({ row, base, changes }) => ({
        at: row.at,
        values: fields.map(({ path }) =>
          base === undefined ? undefined : valueAfterChanges(base, changes, path),
        ),
      }));
      return { points, snapshotsRead: rows.length, fullCopyBytes: meter.fullCopyBytes };
    },

    async sessions(uuid, { from, to, limit }) {
      if (!(await repository.head(uuid))) return undefined;
      const sessions: Session[] = [];
      /** The snapshots of the session being read (newest first), and its login. */
      let current: { login: number; rows: HistoryRow[] } | undefined;
      let before: number | undefined;
      let snapshotsRead = 0;
      const meter: ReadMeter = { fullCopyBytes: 0 };
      const loginOf = (document: { base: unknown; changes: ParsedChanges }) =>
        timeAt(document, ['lastLogin']);

      const close = async (session: { login: number; rows: HistoryRow[] }) => {
        const newest = session.rows[0] as HistoryRow;
        const oldest = session.rows[session.rows.length - 1] as HistoryRow;
        // What the player was before logging in: the snapshot before the session's first, when kept.
        const [previous] = await repository.rows(uuid, [oldest.seq - 1]);
        const [first, last] = await documentsOf(repository, uuid, [previous ?? oldest, newest], meter);
        const logout = last ? timeAt(last, ['lastLogout']) : undefined;
        sessions.push({
          start: session.login,
          end: logout !== undefined && logout >= session.login ? logout : undefined,
          changes:
            first?.base !== undefined && last?.base !== undefined ? numericChanges(first, last) : new Map(),
        });
      };

      while (sessions.length < limit) {
        const page = await repository.newestFirst(uuid, {
          from,
          to,
          limit: Math.min(SESSION_PAGE, MAX_SESSION_SNAPSHOTS - snapshotsRead),
          ...(before === undefined ? {} : { before }),
        });
        snapshotsRead += page.length;
        for (const { row, base, changes } of await documentsOf(repository, uuid, page, meter)) {
          const login = base === undefined ? undefined : loginOf({ base, changes });
          if (login === undefined) continue;
          if (current && current.login === login) {
            current.rows.push(row);
            continue;
          }
          if (current) await close(current);
          if (sessions.length >= limit) break;
          current = { login, rows: [row] };
        }
        if (page.length < SESSION_PAGE || sessions.length >= limit || snapshotsRead >= MAX_SESSION_SNAPSHOTS)
          break;
        before = (page[page.length - 1] as HistoryRow).seq;
      }
      if (current && sessions.length < limit) await close(current);
      return { sessions, snapshotsRead, fullCopyBytes: meter.fullCopyBytes };
    },

    async prepareMonths() {
      const thisMonth = monthStart(now());
      return repository.ensureMonths([
        thisMonth,
        nextMonthStart(thisMonth),
        nextMonthStart(nextMonthStart(thisMonth)),
      ]);
    },

    async deleteExpired(stop) {
      // Whole months only: a month's changes need its full copies.
      const cutoff = monthStart(now() - settings.retentionDays * DAY_MS);
      const dropped = await repository.dropMonthsBefore(cutoff);
      const deleted = await deleteInBatches((batch) => repository.deleteBefore(cutoff, batch), stop);
      return dropped + deleted;
    },
  };
  return service;
}
