import { deleteInBatches } from '../../platform/db/batched-delete.js';
import { createGroupCommitter, type GroupCommitSettings } from '../../platform/db/group-commit.js';
import type { Executor } from '../../platform/db/transactions.js';
import { AppError, ErrorKinds, type Problem } from '../../platform/errors.js';
import type { PlayersService } from '../players/players.service.js';
import {
  createPingRepository,
  type DayAggregate,
  type DayRange,
  type DayRecord,
  type Sample,
} from './ping.repository.js';

/** A sample as a client sends it: `at` (epoch ms) defaults to when it arrives. */
export interface SampleInput {
  readonly ping: number;
  readonly lobby: string;
  readonly at?: number;
}

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
}

export interface PingService {
  /**
   * Stores the samples for the player (a UUID or a username, resolved for `owner`) in one transaction,
   * shared with the batches that arrive with it, and updates the days they fall on; resolves once
   * committed, with the player's UUID. 400 naming each sample whose time is out of bounds, nothing stored.
   */
  ingest(
    player: string,
    samples: readonly SampleInput[],
    owner: string,
  ): Promise<{ uuid: string; stored: number }>;
  /** The player's days with samples, newest first, from the aggregates only (never the raw samples). */
  history(player: string, range: DayRange, owner: string): Promise<readonly PingDay[]>;
  /** Deletes raw samples older than the retention, in bounded batches (the days stay), until done or `stop`. */
  deleteExpired(stop?: AbortSignal): Promise<number>;
  /** Commits every batch already taken; takes no more. */
  close(): Promise<void>;
}

export interface PingSettings {
  /** Raw samples are kept this long; a sample older than this is refused. */
  readonly retentionDays: number;
  /** The most values a day's history keeps (the latest ones); the statistics cover every sample. */
  readonly historyPerDay: number;
  /** Samples waiting for a transaction beyond which ingestion is refused (503). */
  readonly maxQueuedSamples: number;
  readonly groupCommit: GroupCommitSettings;
}

export interface PingServiceDeps {
  readonly db: Executor;
  readonly players: Pick<PlayersService, 'resolve'>;
  readonly settings: PingSettings;
  readonly now?: () => number;
}

const DAY_MS = 86_400_000;
/** How far ahead of the service's clock a sample may be: a client's clock may run a little fast. */
const FUTURE_TOLERANCE_MS = 5 * 60_000;

type Batch = { readonly player: string; readonly samples: readonly Sample[] };

export function createPingService({ db, players, settings, now = Date.now }: PingServiceDeps): PingService {
  const repository = createPingRepository(db);
  // The queue's bound counts samples: one request may hold a thousand.
  const committer = createGroupCommitter<Batch, number>(
    db,
    (transaction, batches) => writeBatches(transaction, batches, settings.historyPerDay),
    { ...settings.groupCommit, maxQueue: settings.maxQueuedSamples },
    {},
    (batch) => batch.samples.length,
  );

  async function uuidOf(player: string, owner: string): Promise<string> {
    const resolved = await players.resolve(player, owner);
    if (!('uuid' in resolved)) throw AppError.of(ErrorKinds.PLAYER_NOT_FOUND);
    return resolved.uuid;
  }

  return {
    async ingest(player, inputs, owner) {
      const samples = timedSamples(inputs, now(), settings.retentionDays);
      const uuid = await uuidOf(player, owner);
      const stored = await committer.submit({ player: uuid, samples });
      return { uuid, stored };
    },

    async history(player, range, owner) {
      if (range.from !== undefined && range.to !== undefined && range.from > range.to) {
        throw AppError.of(ErrorKinds.INVALID_FIELD, {
          cause: 'Invalid query string',
          reason: 'from must not be after to',
          developerReason: `query/from (${range.from}) must not be after query/to (${range.to})`,
        });
      }
      const days = await repository.listDays(await uuidOf(player, owner), range);
      return days.map(pingDay);
    },

    deleteExpired(stop) {
      const cutoff = now() - settings.retentionDays * DAY_MS;
      return deleteInBatches((limit) => repository.deleteSamplesBefore(cutoff, limit), stop);
    },

    close: () => committer.close(),
  };
}

/** The samples with their times (now when not given); 400 naming each one whose time is out of bounds. */
function timedSamples(inputs: readonly SampleInput[], at: number, retentionDays: number): Sample[] {
  const latest = at + FUTURE_TOLERANCE_MS;
  const earliest = at - retentionDays * DAY_MS;
  const problems: Problem[] = [];
  const samples = inputs.map((input, index) => {
    const sample = { at: input.at ?? at, ping: input.ping, lobby: input.lobby };
    const rule =
      sample.at > latest
        ? 'must be at most 5 minutes in the future'
        : sample.at < earliest
          ? `must be within the last ${retentionDays} days (the retention)`
          : undefined;
    if (rule)
      problems.push({
        kind: ErrorKinds.INVALID_FIELD,
        reason: `samples[${index}].at ${rule}`,
        developerReason: `body/samples/${index}/at ${rule}`,
      });
    return sample;
  });
  if (problems.length > 0) throw new AppError(problems, { cause: 'Invalid request body' });
  return samples;
}

/**
 * One transaction's batches: every sample stored as it came, and each (player, day) they fall on updated
 * once, players and days taken in order (so that writers on several instances lock in the same order).
 * Each batch answers how many samples it stored.
 */
async function writeBatches(
  transaction: Executor,
  batches: readonly Batch[],
  historyPerDay: number,
): Promise<number[]> {
  const repository = createPingRepository(transaction);
  const byPlayer = new Map<string, Sample[]>();
  for (const { player, samples } of batches) {
    const known = byPlayer.get(player);
    if (known) known.push(...samples);
    else byPlayer.set(player, [...samples]);
  }
  for (const player of [...byPlayer.keys()].sort()) {
    const samples = byPlayer.get(player) ?? [];
    await repository.insertSamples(player, samples);
    const byDay = new Map<string, Sample[]>();
    for (const sample of samples) {
      const day = dayOf(sample.at);
      const known = byDay.get(day);
      if (known) known.push(sample);
      else byDay.set(day, [sample]);
    }
    const aggregates = await repository.lockDays(player, [...byDay.keys()]);
    for (const [day, daySamples] of byDay)
      await repository.saveDay(player, addSamples(aggregates.get(day), day, daySamples, historyPerDay));
  }
  return batches.map((batch) => batch.samples.length);
}

/** The UTC calendar day of an instant, `YYYY-MM-DD`. */
const dayOf = (at: number): string => new Date(at).toISOString().slice(0, 10);

/**
 * A day with more samples, in the order they arrived: the statistics take every one; the last sample is
 * the latest by time (of equal times, the one that arrived last); the history takes them in time order,
 * a late sample in its place, and keeps the latest `cap` values.
 */
export function addSamples(
  known: DayAggregate | undefined,
  day: string,
  samples: readonly Sample[],
  cap: number,
): DayAggregate {
  let count = known?.samples ?? 0;
  let total = known?.total ?? 0;
  let min = known?.min ?? Number.POSITIVE_INFINITY;
  let max = known?.max ?? Number.NEGATIVE_INFINITY;
  let lastAt = known?.lastAt ?? Number.NEGATIVE_INFINITY;
  let lastLobby = known?.lastLobby ?? '';
  for (const sample of samples) {
    count++;
    total += sample.ping;
    min = Math.min(min, sample.ping);
    max = Math.max(max, sample.ping);
    if (sample.at >= lastAt) {
      lastAt = sample.at;
      lastLobby = sample.lobby;
    }
  }
  // Merge by time; the sort is stable, and of equal times the known values come first.
  const incoming = [...samples].sort((a, b) => a.at - b.at);
  const oldValues = known?.history ?? [];
  const oldTimes = known?.historyAt ?? [];
  const history: number[] = [];
  const historyAt: number[] = [];
  let old = 0;
  let next = 0;
  while (old < oldTimes.length || next < incoming.length) {
    const fresh = incoming[next];
    if (fresh === undefined || (old < oldTimes.length && (oldTimes[old] as number) <= fresh.at)) {
      history.push(oldValues[old] as number);
      historyAt.push(oldTimes[old] as number);
      old++;
    } else {
      history.push(fresh.ping);
      historyAt.push(fresh.at);
      next++;
    }
  }
  const dropped = Math.max(0, history.length - cap);
  return {
    day,
    samples: count,
    total,
    min,
    max,
    lastAt,
    lastLobby,
    history: history.slice(dropped),
    historyAt: historyAt.slice(dropped),
  };
}

/** The mean of `total` over `count`, rounded half up to 2 decimals, in integers (exact). */
export const averageOf = (total: number, count: number): number =>
  Math.floor((total * 200 + count) / (2 * count)) / 100;

const pingDay = (record: DayRecord): PingDay => ({
  day: record.day,
  avg: averageOf(record.total, record.samples),
  min: record.min,
  max: record.max,
  lastAt: record.lastAt,
  lastLobby: record.lastLobby,
  historyJson: record.historyJson,
});
