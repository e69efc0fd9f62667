import { createHash } from 'node:crypto';
import { setImmediate } from 'node:timers/promises';
import {
  brotliCompressSync,
  brotliDecompressSync,
  constants,
  deflateRawSync,
  inflateRawSync,
} from 'node:zlib';
import { deleteInBatches } from '../../platform/db/batched-delete.js';
import { type Executor, inTransaction } from '../../platform/db/transactions.js';
import { AppError, ErrorKinds, type FieldProblem, InputError } from '../../platform/errors.js';
import { parseJsonExact, stringifyExact } from '../../platform/json.js';
import {
  diffJson,
  type JsonChange,
  type ParsedChanges,
  parseChanges,
  valueAfterChanges,
} from '../../platform/json-changes.js';
import { type PointerPath, parsePointer } from '../../platform/json-pointer.js';
import { DAY_MS } from '../../platform/utc-day.js';
import {
  createPlayerHistoryRepository,
  type HistoryHead,
  type HistoryRow,
  monthStart,
  nextMonthStart,
} from './player-history.repository.js';
import { numberAt, numericChanges, type Session } from './player-sessions.service.js';

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

/** How hard Brotli works on a full copy: 5 gives within 1 % of 11's size at a fraction of the time. */
const BROTLI_QUALITY = 5;
/** A new full copy once the changes kept since the last one cost this many times its size. */
const FULL_COPY_FACTOR = 2;
/** How many snapshots the sessions reader takes from the database at a time, and at most in all. */
const SESSION_PAGE = 200;
export const MAX_SESSION_SNAPSHOTS = 5000;
/** How many full copies a read parses before it lets other requests run. */
const FULL_COPIES_PER_TURN = 8;

export type { Session } from './player-sessions.service.js';

export interface HistorySettings {
  /** How many days of snapshots are kept (whole UTC months are removed once all of their days are older). */
  readonly retentionDays: number;
}

export interface HistoryQuery {
  /** The pointers asked for, as given (the answer's keys), with their tokens. */
  readonly fields: readonly { readonly pointer: string; readonly path: PointerPath }[];
  readonly from: number;
  readonly to: number;
  readonly limit: number;
}

/** One snapshot's values of the fields asked for (undefined: the player had no such value). */
export interface HistoryPoint {
  readonly at: number;
  readonly values: readonly unknown[];
}

/** What a caller asks of a player's history: pointers as given, and the range (epoch ms, inclusive). */
export interface HistoryRequest {
  readonly fields: readonly string[];
  readonly from?: number;
  readonly to?: number;
  readonly limit?: number;
}

export interface SessionsRequest {
  readonly from?: number;
  readonly to?: number;
  readonly limit?: number;
}

/** The most pointers one history read may name. */
export const MAX_HISTORY_FIELDS = 50;
/** How many points a history read gives when not told, and how many sessions. */
export const DEFAULT_HISTORY_POINTS = 100;
export const DEFAULT_SESSIONS = 20;

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

const digestOf = (changesText: string) => createHash('sha256').update(changesText).digest('base64url');
const NO_CHANGES = stringifyExact([]);

const compressFull = (json: string) =>
  brotliCompressSync(json, { params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } });
/** What a read went through: the bytes of the full copies it parsed (the most of its cost). */
interface ReadMeter {
  fullCopyBytes: number;
}

const readFull = (row: HistoryRow, meter?: ReadMeter): unknown => {
  const text = brotliDecompressSync(row.body);
  if (meter) meter.fullCopyBytes += text.length;
  return parseJsonExact(text.toString('utf8'));
};
const readChanges = (row: HistoryRow): ParsedChanges =>
  parseChanges(parseJsonExact(inflateRawSync(row.body).toString('utf8')) as JsonChange[]);
const isFull = (row: HistoryRow) => row.baseSeq === row.seq;

/** `count` seqs from `first` to `last`, evenly spread, both ends in (one: the last). */
export function thinnedSeqs(first: number, last: number, count: number): number[] {
  const total = last - first + 1;
  if (total <= count) return Array.from({ length: total }, (_, index) => first + index);
  if (count === 1) return [last];
  return Array.from({ length: count }, (_, index) => first + Math.round((index * (total - 1)) / (count - 1)));
}

/** The pointers asked for, each once, in the order first given; an InputError naming the bad ones. */
function fieldsOf(given: readonly string[]): HistoryQuery['fields'] {
  const problems: FieldProblem[] = [];
  const fields = new Map<string, PointerPath>();
  given.forEach((pointer, index) => {
    const path = parsePointer(pointer);
    if (path === undefined || pointer === '') {
      problems.push({
        field: ['fields', index],
        rule: 'must be a JSON Pointer into the player object, such as /stats/Bedwars/wins_bedwars',
      });
    } else fields.set(pointer, path);
  });
  if (problems.length > 0) throw new InputError(problems);
  if (fields.size === 0 || fields.size > MAX_HISTORY_FIELDS) {
    throw new InputError([{ field: ['fields'], rule: `must name 1 to ${MAX_HISTORY_FIELDS} pointers` }]);
  }
  return [...fields].map(([pointer, path]) => ({ pointer, path }));
}

/** The range asked for, from the first snapshot to now when not told; an InputError when it is backwards. */
function rangeOf(request: { from?: number; to?: number }, now: number): { from: number; to: number } {
  const { from = 0, to = now } = request;
  if (from > to) {
    throw new InputError([
      {
        field: ['from'],
        rule: 'must not be after to',
        developerRule: (name) =>
          `(${new Date(from).toISOString()}) must not be after ${name(['to'])} (${new Date(to).toISOString()})`,
      },
    ]);
  }
  return { from, to };
}

const noHistory = (uuid: string) =>
  AppError.of(ErrorKinds.PLAYER_NOT_FOUND, {
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

  /** The full copies the rows refer to, parsed, by seq (those among the rows are not read again). */
  async function basesOf(
    uuid: string,
    rows: readonly HistoryRow[],
    meter: ReadMeter,
  ): Promise<Map<number, unknown>> {
    const fulls = rows.filter(isFull);
    const missing = [...new Set(rows.map((row) => row.baseSeq))].filter(
      (seq) => !fulls.some((row) => row.seq === seq),
    );
    fulls.push(...(await repository.rows(uuid, missing)));
    const bases = new Map<number, unknown>();
    for (const [index, row] of fulls.entries()) {
      // Reading a full copy takes most of a millisecond: other requests get a turn between a few.
      if (index > 0 && index % FULL_COPIES_PER_TURN === 0) await setImmediate();
      bases.set(row.seq, readFull(row, meter));
    }
    return bases;
  }

  /** Each row's document, as a full copy and the changes over it (undefined: its full copy is gone). */
  async function documentsOf(uuid: string, rows: readonly HistoryRow[], meter: ReadMeter) {
    const bases = await basesOf(uuid, rows, meter);
    return rows.map((row) => {
      const base = bases.get(row.baseSeq);
      return {
        row,
        base,
        changes: isFull(row) || base === undefined ? parseChanges([]) : readChanges(row),
      };
    });
  }

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
          const body = deflateRawSync(changesText);
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
      const points = (await documentsOf(uuid, rows, meter)).map(({ row, base, changes }) => ({
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
        numberAt(document, ['lastLogin']);

      const close = async (session: { login: number; rows: HistoryRow[] }) => {
        const newest = session.rows[0] as HistoryRow;
        const oldest = session.rows[session.rows.length - 1] as HistoryRow;
        // What the player was before logging in: the snapshot before the session's first, when kept.
        const [previous] = await repository.rows(uuid, [oldest.seq - 1]);
        const [first, last] = await documentsOf(uuid, [previous ?? oldest, newest], meter);
        const logout = last ? numberAt(last, ['lastLogout']) : undefined;
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
        for (const { row, base, changes } of await documentsOf(uuid, page, meter)) {
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
