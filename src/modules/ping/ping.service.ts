import { createSingleFlight } from '../../platform/cache/single-flight.js';
import type { GroupCommitSettings } from '../../platform/db/group-commit.js';
import { createRetainedWrites } from '../../platform/db/retained-writes.js';
import type { Executor } from '../../platform/db/transactions.js';
import { InputError } from '../../platform/errors.js';
import type { PlayersService } from '../players/players.service.js';
import { createPingRepository, type DayRange, type DayRecordSince } from './ping.repository.js';
import { createPingDaysStore, type KeptDays, mergeDays } from './ping-days.service.js';
import {
  type Batch,
  type Ingested,
  RESEND_MARGIN_MS,
  type SampleInput,
  timedSamples,
  type Written,
  writeBatches,
} from './ping-writes.service.js';

export type { Ingested, SampleInput } from './ping-writes.service.js';

/** One UTC day of a player's pings, as endpoint 6 shows it. */
export interface PingDay {
  /** `YYYY-MM-DD`. */
  readonly day: string;
  /** The mean over all the day's samples, rounded half up to 2 decimals. */
  readonly avg: number;
  readonly min: number;
  readonly max: number;
  readonly lastAt: number;
  readonly lastLobby: string;
  /** The day's latest ping values (up to the cap) in time order, as a JSON array: sent as it is. */
  readonly historyJson: string;
  /** The player's revision when this day last changed. */
  readonly revision: number;
  /** How many samples the day has (its statistics cover them all). */
  readonly samples: number;
}

/** A player's days in a range, newest first, as of a revision of theirs (the same revision, the same days). */
export interface PingHistory {
  readonly uuid: string;
  readonly revision: number;
  readonly days: readonly PingDay[];
}

export interface PingService {
  /**
   * Stores, as written by `owner`, those of the samples for the player (a UUID or a username, resolved for
   * `owner`) that are not stored yet, in one transaction shared with the batches that arrive with it, and
   * adds them to the days they fall on; resolves once committed. A sample equal to a stored one (same
   * player, time, ping and lobby) is stored once, so a batch sent again changes nothing. 400 naming the
   * samples (up to MAX_PROBLEMS) whose time is out of bounds, nothing stored.
   */
  ingest(player: string, samples: readonly SampleInput[], owner: bigint): Promise<Ingested>;
  /**
   * The player's days with samples in the range, newest first, from the aggregates only (never the raw
   * samples): kept in memory while the player's revision does not move (one row read per call), and
   * reloaded in part when it does (the days that changed, with the statistics of the others).
   */
  history(player: string, range: DayRange, owner: bigint): Promise<PingHistory>;
  /**
   * Deletes raw samples older than the retention and RESEND_MARGIN_MS, in bounded batches (the days stay),
   * until done or `stop`.
   */
  deleteExpired(stop?: AbortSignal): Promise<number>;
  /** Commits every batch already taken; takes no more. */
  close(): Promise<void>;
}

export interface PingSettings {
  /** Raw samples are kept this long; a sample older than this is refused. */
  readonly retentionDays: number;
  /**
   * How far a sample's time may be after the batch was received: a collector's clock may run a little fast,
   * but a sample from the future would stay its day's last sample until the clock caught up with it.
   */
  readonly maxFutureMs: number;
  /** The most values a day's history keeps (the latest ones); the statistics cover every sample. */
  readonly historyPerDay: number;
  /** The most bytes of players' days kept in memory (their histories' text and bookkeeping). */
  readonly keptDaysMaxBytes: number;
  /** Samples waiting for a transaction beyond which ingestion is refused (503). */
  readonly maxQueuedSamples: number;
  readonly groupCommit: GroupCommitSettings;
}

export interface PingServiceDeps {
  readonly db: Executor;
  readonly players: Pick<PlayersService, 'uuidOf'>;
  readonly settings: PingSettings;
  readonly now?: () => number;
}

export function createPingService({ db, players, settings, now = Date.now }: PingServiceDeps): PingService {
  const repository = createPingRepository(db);
  const writes = createRetainedWrites<Batch, Written>({
    db,
    write: (transaction, batches) => writeBatches(transaction, batches, settings.historyPerDay, now()),
    // The queue's bound counts samples: one request may hold a thousand.
    groupCommit: { ...settings.groupCommit, maxQueue: settings.maxQueuedSamples },
    weightOf: (batch) => batch.samples.length,
    retentionDays: settings.retentionDays,
    // Kept a margin past the window samples are accepted in, so that a resend still finds them.
    deleteBefore: (cutoff, limit) => repository.deleteSamplesBefore(cutoff - RESEND_MARGIN_MS, limit),
    now,
  });

  const kept = createPingDaysStore<PingDay>(settings.keptDaysMaxBytes);
  const loads = createSingleFlight();

  /**
   * The player's days as of `revision` (or a later one): those kept when they are at it, else read (only
   * the histories changed since the kept revision) and kept. A revision lower than the kept one (a database
   * restored or replaced) reads every history.
   */
  async function daysOf(uuid: string, revision: number): Promise<KeptDays<PingDay>> {
    const before = kept.get(uuid);
    if (before?.revision === revision) return before;
    const { value } = await loads.run(`${uuid}:${revision}`, async () => {
      const read = async (since: KeptDays<PingDay> | undefined) =>
        mergeDays(since, await repository.daysChangedSince(uuid, since?.revision ?? -1), revision, pingDay);
      const base = before && before.revision < revision ? before : undefined;
      // A day that came without its history but is not kept as the record has it: read them all.
      const days = (await read(base)) ?? (await read(undefined));
      if (!days) throw new Error('ping days read without their histories');
      // Whatever is kept is checked against the revision of each read: a copy kept out of order costs a read.
      kept.set(uuid, days);
      return days;
    });
    return value;
  }

  return {
    async ingest(player, inputs, owner) {
      const samples = timedSamples(inputs, now(), settings);
      const uuid = await players.uuidOf(player, owner);
      const { stored, duplicates } = await writes.submit({ player: uuid, owner, samples });
      return { uuid, stored, duplicates };
    },

    async history(player, range, owner) {
      if (range.from !== undefined && range.to !== undefined && range.from > range.to) {
        throw new InputError([
          {
            field: ['from'],
            rule: 'must not be after to',
            developerRule: (name) => `(${range.from}) must not be after ${name(['to'])} (${range.to})`,
          },
        ]);
      }
      const uuid = await players.uuidOf(player, owner);
      const { revision, days } = await daysOf(uuid, await repository.revisionOf(uuid));
      return { uuid, revision, days: inRange(days, range) };
    },

    deleteExpired: writes.deleteExpired,

    close: writes.close,
  };
}

/** The mean of `total` over `count`, rounded half up to 2 decimals, in integers (exact). */
export const averageOf = (total: number, count: number): number =>
  Math.floor((total * 200 + count) / (2 * count)) / 100;

/** The days (newest first) within the range: from and to inclusive, the newest `limit`. */
function inRange(days: readonly PingDay[], { from, to, limit }: DayRange): readonly PingDay[] {
  const within =
    from === undefined && to === undefined
      ? days
      : days.filter(({ day }) => (from === undefined || day >= from) && (to === undefined || day <= to));
  return limit === undefined ? within : within.slice(0, limit);
}

const pingDay = (record: DayRecordSince & { readonly historyJson: string }): PingDay => ({
  day: record.day,
  avg: averageOf(record.total, record.samples),
  min: record.min,
  max: record.max,
  lastAt: record.lastAt,
  lastLobby: record.lastLobby,
  historyJson: record.historyJson,
  revision: record.revision,
  samples: record.samples,
});
