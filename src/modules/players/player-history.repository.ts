import { sql } from 'kysely';
import { dialectOf, tablesOf } from '../../platform/db/repository-view.js';
import type { Executor } from '../../platform/db/transactions.js';
import type { PlayerHistoryHeadsTable, PlayerHistoryTables } from './player-history.tables.js';

/** A player's latest snapshot, as the next fetch is compared with it (seq 0: none yet). */
export interface HistoryHead {
  readonly seq: number;
  readonly at: number;
  readonly baseSeq: number;
  readonly baseAt: number;
  readonly baseBytes: number;
  readonly sinceBase: number;
  readonly changesBytes: number;
  readonly digest: string;
}

/** One stored snapshot: a full copy (`baseSeq === seq`) or changes against one. */
export interface HistoryRow {
  readonly seq: number;
  readonly at: number;
  readonly baseSeq: number;
  readonly body: Buffer;
}

const NO_HEAD: Omit<PlayerHistoryHeadsTable, 'uuid'> = {
  seq: 0,
  at: 0,
  base_seq: 0,
  base_at: 0,
  base_bytes: 0,
  since_base: 0,
  changes_bytes: 0,
  digest: '',
};

const headOf = (row: PlayerHistoryHeadsTable): HistoryHead => ({
  seq: Number(row.seq),
  at: Number(row.at),
  baseSeq: Number(row.base_seq),
  baseAt: Number(row.base_at),
  baseBytes: Number(row.base_bytes),
  sinceBase: Number(row.since_base),
  changesBytes: Number(row.changes_bytes),
  digest: row.digest,
});

const rowOf = (row: { seq: number; at: number; base_seq: number; body: Buffer }): HistoryRow => ({
  seq: Number(row.seq),
  at: Number(row.at),
  baseSeq: Number(row.base_seq),
  body: Buffer.from(row.body),
});

/** The name of the PostgreSQL partition holding a UTC month (`monthStart`: its first millisecond). */
const partitionName = (monthStart: number) => {
  const date = new Date(monthStart);
  return `player_history_m${date.getUTCFullYear()}${String(date.getUTCMonth() + 1).padStart(2, '0')}`;
};
const PARTITION_NAME = /^player_history_m(\d{4})(\d{2})$/;

/** The first millisecond of the UTC month after the one `at` is in. */
export const nextMonthStart = (at: number): number => {
  const date = new Date(at);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
};

/** The first millisecond of the UTC month `at` is in. */
export const monthStart = (at: number): number => {
  const date = new Date(at);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
};

/** All SQL about players' snapshots, on `executor` (the database, or the service's transaction). */
export function createPlayerHistoryRepository(executor: Executor) {
  const db = tablesOf<PlayerHistoryTables>(executor);
  const postgres = dialectOf(executor) === 'postgres';
  const columns = ['seq', 'at', 'base_seq', 'body'] as const;
  /** The player's snapshots taken from `from` to `to` (inclusive), for a query to select from. */
  const inRange = (uuid: string, from: number, to: number) =>
    db.selectFrom('player_history').where('uuid', '=', uuid).where('at', '>=', from).where('at', '<=', to);

  return {
    /**
     * The player's head, locked until the transaction ends (made first when the player has none): a
     * concurrent fetch of the same player waits, then compares with what this one stored. Call it inside
     * a transaction.
     */
    async lockHead(uuid: string): Promise<HistoryHead> {
      await db
        .insertInto('player_history_heads')
        .values({ uuid, ...NO_HEAD })
        .onConflict((conflict) => conflict.column('uuid').doNothing())
        .execute();
      const row = await db
        .selectFrom('player_history_heads')
        .selectAll()
        .where('uuid', '=', uuid)
        .$if(postgres, (query) => query.forUpdate())
        .executeTakeFirstOrThrow();
      return headOf(row);
    },

    /** The player's head, or undefined when no snapshot of theirs was ever stored. */
    async head(uuid: string): Promise<HistoryHead | undefined> {
      const row = await db
        .selectFrom('player_history_heads')
        .selectAll()
        .where('uuid', '=', uuid)
        .executeTakeFirst();
      return row && Number(row.seq) > 0 ? headOf(row) : undefined;
    },

    async setHead(uuid: string, head: HistoryHead): Promise<void> {
      await db
        .updateTable('player_history_heads')
        .set({
          seq: head.seq,
          at: head.at,
          base_seq: head.baseSeq,
          base_at: head.baseAt,
          base_bytes: head.baseBytes,
          since_base: head.sinceBase,
          changes_bytes: head.changesBytes,
          digest: head.digest,
        })
        .where('uuid', '=', uuid)
        .execute();
    },

    async insert(uuid: string, row: HistoryRow, owner: bigint | null): Promise<void> {
      await db
        .insertInto('player_history')
        .values({
          uuid,
          seq: row.seq,
          at: row.at,
          base_seq: row.baseSeq,
          body: row.body,
          fetched_by: owner === null ? null : owner.toString(),
        })
        .execute();
    },

    /** The snapshot `seq` taken at `at` (the time lets PostgreSQL read one partition), if still kept. */
    async row(uuid: string, seq: number, at: number): Promise<HistoryRow | undefined> {
      const row = await db
        .selectFrom('player_history')
        .select(columns)
        .where('uuid', '=', uuid)
        .where('seq', '=', seq)
        .where('at', '=', at)
        .executeTakeFirst();
      return row && rowOf(row);
    },

    /** The snapshots with these seqs, by seq. */
    async rows(uuid: string, seqs: readonly number[]): Promise<HistoryRow[]> {
      if (seqs.length === 0) return [];
      const rows = await db
        .selectFrom('player_history')
        .select(columns)
        .where('uuid', '=', uuid)
        .where('seq', 'in', seqs)
        .orderBy('seq')
        .execute();
      return rows.map(rowOf);
    },

    /** The first and last seq of the player's snapshots taken from `from` to `to` (inclusive). */
    async seqRange(
      uuid: string,
      from: number,
      to: number,
    ): Promise<{ first: number; last: number } | undefined> {
      const end = (direction: 'asc' | 'desc') =>
        inRange(uuid, from, to).select('seq').orderBy('at', direction).limit(1).executeTakeFirst();
      const [first, last] = await Promise.all([end('asc'), end('desc')]);
      return first && last ? { first: Number(first.seq), last: Number(last.seq) } : undefined;
    },

    /**
     * Up to `limit` snapshots taken from `from` to `to`, newest first, older than seq `before` (none: from
     * the newest).
     */
    async newestFirst(
      uuid: string,
      { from, to, before, limit }: { from: number; to: number; before?: number; limit: number },
    ): Promise<HistoryRow[]> {
      const rows = await inRange(uuid, from, to)
        .select(columns)
        .$if(before !== undefined, (query) => query.where('seq', '<', before as number))
        .orderBy('at', 'desc')
        .limit(limit)
        .execute();
      return rows.map(rowOf);
    },

    /** Deletes up to `limit` of the oldest snapshots taken before `cutoff`; how many it deleted. */
    async deleteBefore(cutoff: number, limit: number): Promise<number> {
      const result = await sql`delete from player_history where at < ${cutoff} and (uuid, seq) in (
        select uuid, seq from player_history where at < ${cutoff} order by at limit ${limit})`.execute(db);
      return Number(result.numAffectedRows ?? 0);
    },

    /**
     * PostgreSQL: makes the month partitions starting at `months` (first milliseconds of UTC months) that
     * do not exist yet; a month the default partition already holds rows of stays there (its rows are
     * deleted by `deleteBefore` in time). The months it could not make. SQLite: nothing to do.
     */
    async ensureMonths(months: readonly number[]): Promise<number[]> {
      if (!postgres) return [];
      const failed: number[] = [];
      for (const start of months) {
        const name = partitionName(start);
        const exists = await sql<{ found: string | null }>`select to_regclass(${name}) as found`.execute(db);
        if (exists.rows[0]?.found) continue;
        try {
          await sql`create table if not exists ${sql.table(name)} partition of player_history
            for values from (${sql.lit(start)}) to (${sql.lit(nextMonthStart(start))})`.execute(db);
        } catch {
          failed.push(start);
        }
      }
      return failed;
    },

    /** PostgreSQL: drops the month partitions that end at or before `cutoff`; how many. SQLite: none. */
    async dropMonthsBefore(cutoff: number): Promise<number> {
      if (!postgres) return 0;
      const partitions = await sql<{ name: string }>`select c.relname as name from pg_inherits i
        join pg_class c on c.oid = i.inhrelid where i.inhparent = 'player_history'::regclass`.execute(db);
      let dropped = 0;
      for (const { name } of partitions.rows) {
        const month = PARTITION_NAME.exec(name);
        if (!month) continue;
        const start = Date.UTC(Number(month[1]), Number(month[2]) - 1, 1);
        if (nextMonthStart(start) > cutoff) continue;
        await sql`drop table if exists ${sql.table(name)}`.execute(db);
        dropped += 1;
      }
      return dropped;
    },
  };
}
