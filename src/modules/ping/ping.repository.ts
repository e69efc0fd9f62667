import { dialectOf, tablesOf } from '../../platform/db/repository-view.js';
import type { Executor } from '../../platform/db/transactions.js';
import type { PingDaysTable, PingTables } from './ping.tables.js';

/** A ping sample: when (epoch ms), how long (ms), and in which lobby. Two equal samples are one. */
export interface Sample {
  readonly at: number;
  readonly ping: number;
  readonly lobby: string;
}

/** A sample with the owner whose token wrote it. */
export interface OwnedSample extends Sample {
  readonly owner: bigint;
}

/** One player's day as kept: statistics over all its samples, and its history (capped, time order). */
export interface DayAggregate {
  /** UTC calendar day, `YYYY-MM-DD`. */
  readonly day: string;
  readonly samples: number;
  readonly total: number;
  readonly min: number;
  readonly max: number;
  readonly lastAt: number;
  readonly lastLobby: string;
  readonly history: readonly number[];
  readonly historyAt: readonly number[];
}

/**
 * A day as endpoint 6 reads it, with the revision it last changed at: the history as the JSON text it is
 * kept as (to be sent as it is), absent when it did not change after the revision the reader asked from.
 */
export type DayRecordSince = Omit<DayAggregate, 'history' | 'historyAt'> & {
  readonly revision: number;
  readonly historyJson: string | undefined;
};

export interface DayRange {
  /** First day (inclusive), `YYYY-MM-DD`. */
  readonly from?: string;
  /** Last day (inclusive). */
  readonly to?: string;
  readonly limit?: number;
}

/** Samples per insert statement: 5 parameters each, well under both databases' limits. */
const INSERT_CHUNK = 1000;
/**
 * Days per statement: a day's placeholder row takes 10 parameters, and SQLite takes at most 32,766 in one
 * statement (a group of batches may touch thousands of one player's days).
 */
const DAY_CHUNK = 1000;

/**
 * The one order in which writers insert samples (by time, then ping, then lobby code unit by code unit): every
 * total order does, as long as every instance uses the same.
 */
const sampleOrder = (a: Sample, b: Sample): number =>
  a.at - b.at || a.ping - b.ping || (a.lobby < b.lobby ? -1 : a.lobby > b.lobby ? 1 : 0);

const chunksOf = <T>(items: readonly T[], size: number): T[][] =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, index) =>
    items.slice(index * size, (index + 1) * size),
  );

/**
 * All SQL about ping samples and their per-day aggregates, run on `executor`: the database, or a
 * transaction the service started.
 */
export function createPingRepository(executor: Executor) {
  const db = tablesOf<PingTables>(executor);
  return {
    /**
     * Stores those of the player's samples that are not stored yet, and answers those it stored. A sample
     * equal to a stored one (player, at, ping, lobby: the unique index) is left out, whoever wrote either.
     * On PostgreSQL, inserting a sample that another transaction has inserted but not committed waits for
     * that transaction: then it stores nothing if it committed, the sample if it rolled back. They go in
     * in one order (`sampleOrder`), so that writers on several instances never wait on each other in a
     * circle. The samples given are distinct (of equal ones, the caller decides which one is stored).
     */
    async insertNewSamples(player: string, samples: readonly OwnedSample[]): Promise<Sample[]> {
      const stored: Sample[] = [];
      for (const chunk of chunksOf([...samples].sort(sampleOrder), INSERT_CHUNK)) {
        const rows = await db
          .insertInto('ping_samples')
          .values(
            chunk.map(({ at, ping, lobby, owner }) => ({ player, at, ping, lobby, owner: owner.toString() })),
          )
          .onConflict((conflict) => conflict.columns(['player', 'at', 'ping', 'lobby']).doNothing())
          .returning(['at', 'ping', 'lobby'])
          .execute();
        for (const row of rows) stored.push({ at: Number(row.at), ping: row.ping, lobby: row.lobby });
      }
      return stored;
    },

    /**
     * The player's aggregates of these days, locked until the transaction ends (on PostgreSQL a row lock,
     * taken in day order so that two writers never wait for each other in a circle; SQLite has one writer).
     * A day with no samples yet comes back absent.
     */
    async lockDays(player: string, days: readonly string[]): Promise<Map<string, DayAggregate>> {
      const aggregates = new Map<string, DayAggregate>();
      // In day order, chunk after chunk, so that every writer locks one player's days in the same order.
      for (const chunk of chunksOf([...days].sort(), DAY_CHUNK)) {
        // Every day gets its row first, so that the lock has a row to hold even for a new day: a writer
        // that finds the row being created waits for that transaction, then sees the row.
        await db
          .insertInto('ping_days')
          .values(chunk.map((day) => emptyDay(player, day)))
          .onConflict((conflict) => conflict.columns(['player', 'day']).doNothing())
          .execute();
        const rows = await db
          .selectFrom('ping_days')
          .selectAll()
          .where('player', '=', player)
          .where('day', 'in', chunk)
          .orderBy('day')
          .$if(dialectOf(executor) === 'postgres', (query) => query.forUpdate())
          .execute();
        for (const row of rows) if (Number(row.samples) > 0) aggregates.set(row.day, toAggregate(row));
      }
      return aggregates;
    },

    /** Saves the day's aggregate, changed at `revision`. */
    async saveDay(player: string, day: DayAggregate, revision: number): Promise<void> {
      await db
        .updateTable('ping_days')
        .set({
          revision,
          samples: day.samples,
          total: day.total,
          min: day.min,
          max: day.max,
          last_at: day.lastAt,
          last_lobby: day.lastLobby,
          history: JSON.stringify(day.history),
          history_at: JSON.stringify(day.historyAt),
        })
        .where('player', '=', player)
        .where('day', '=', day.day)
        .execute();
    },

    /** The player's ping revision: 0 before any sample was stored (or before revisions were kept). */
    async revisionOf(player: string): Promise<number> {
      const row = await db
        .selectFrom('ping_players')
        .select('revision')
        .where('player', '=', player)
        .executeTakeFirst();
      return row ? Number(row.revision) : 0;
    },

    /**
     * Moves the player's revision on (locking its row until the transaction ends, before the days, in the
     * same order for every writer) and answers it: one more than it was, or `now` when that is later.
     */
    async nextRevision(player: string, now: number): Promise<number> {
      const row = await db
        .insertInto('ping_players')
        .values({ player, revision: now })
        .onConflict((conflict) =>
          conflict.column('player').doUpdateSet((eb) => ({
            revision: eb
              .case()
              .when('ping_players.revision', '>=', eb.ref('excluded.revision'))
              .then(eb(eb.ref('ping_players.revision'), '+', 1))
              .else(eb.ref('excluded.revision'))
              .end(),
          })),
        )
        .returning('revision')
        .executeTakeFirstOrThrow();
      return Number(row.revision);
    },

    /**
     * Every one of the player's days with samples, newest first, in one statement (one snapshot): each with
     * its statistics and revision, and its history only when the day changed after revision `since` (the
     * caller keeps the others). `since` -1: every history.
     */
    async daysChangedSince(player: string, since: number): Promise<DayRecordSince[]> {
      const rows = await db
        .selectFrom('ping_days')
        .select((eb) => [
          'day',
          'samples',
          'total',
          'min',
          'max',
          'last_at',
          'last_lobby',
          'revision',
          eb.case().when('revision', '>', since).then(eb.ref('history')).else(null).end().as('history'),
        ])
        .where('player', '=', player)
        .where('samples', '>', 0)
        .orderBy('day', 'desc')
        .execute();
      return rows.map((row) => ({
        ...statisticsOf(row),
        revision: Number(row.revision),
        historyJson: row.history ?? undefined,
      }));
    },

    /** Deletes up to `limit` of the oldest samples taken before `cutoff`; how many it deleted. */
    async deleteSamplesBefore(cutoff: number, limit: number): Promise<number> {
      const result = await db
        .deleteFrom('ping_samples')
        .where('id', 'in', (select) =>
          select.selectFrom('ping_samples').select('id').where('at', '<', cutoff).orderBy('at').limit(limit),
        )
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

const emptyDay = (player: string, day: string): PingDaysTable => ({
  player,
  day,
  samples: 0,
  total: 0,
  min: 0,
  max: 0,
  last_at: 0,
  last_lobby: '',
  history: '[]',
  history_at: '[]',
  revision: 0,
});

/** A day's row without its history: the statistics and the last sample. */
const statisticsOf = (
  row: Omit<PingDaysTable, 'player' | 'history' | 'history_at' | 'revision'>,
): Omit<DayAggregate, 'history' | 'historyAt'> => ({
  day: row.day,
  samples: Number(row.samples),
  total: Number(row.total),
  min: row.min,
  max: row.max,
  lastAt: Number(row.last_at),
  lastLobby: row.last_lobby,
});

const toAggregate = (row: PingDaysTable): DayAggregate => ({
  ...statisticsOf(row),
  history: JSON.parse(row.history) as number[],
  historyAt: JSON.parse(row.history_at) as number[],
});
