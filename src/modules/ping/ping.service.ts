import { createSingleFlight } from '../../platform/cache/single-flight.js';
import { deleteInBatches } from '../../platform/db/batched-delete.js';
import { createGroupCommitter, type GroupCommitSettings } from '../../platform/db/group-commit.js';
import type { Executor } from '../../platform/db/transactions.js';
import { AppError, ErrorKinds, MAX_PROBLEMS, type Problem } from '../../platform/errors.js';
import type { PlayersService } from '../players/players.service.js';
import {
  createPingRepository,
  type DayAggregate,
  type DayRange,
  type DayRecordSince,
  type OwnedSample,
  type Sample,
} from './ping.repository.js';
import { createPingDaysStore, type KeptDays, mergeDays } from './ping-days.service.js';

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

/** What became of a batch of samples. */
export interface Ingested {
  /** The player's UUID (a username resolved). */
  readonly uuid: string;
  /** How many of its samples were stored: those not stored before. */
  readonly stored: number;
  /** How many were stored already (by anyone), or repeated an earlier sample of the batch. */
  readonly duplicates: number;
}

export interface PingService {
  /**
   * Stores, as written by `owner`, those of the samples for the player (a UUID or a username, resolved for
   * `owner`) that are not stored yet, in one transaction shared with the batches that arrive with it, and
   * adds them to the days they fall on; resolves once committed. A sample equal to a stored one (same
   * player, time, ping and lobby) is stored once, so a batch sent again changes nothing. 400 naming the
   * samples (up to MAX_PROBLEMS) whose time is out of bounds, nothing stored.
   */
  ingest(player: string, samples: readonly SampleInput[], owner: string): Promise<Ingested>;
  /**
   * The player's days with samples in the range, newest first, from the aggregates only (never the raw
   * samples): kept in memory while the player's revision does not move (one row read per call), and
   * reloaded in part when it does (the days that changed, with the statistics of the others).
   */
  history(player: string, range: DayRange, owner: string): Promise<PingHistory>;
  /** Deletes raw samples older than the retention, in bounded batches (the days stay), until done or `stop`. */
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
  readonly players: Pick<PlayersService, 'resolve'>;
  readonly settings: PingSettings;
  readonly now?: () => number;
}

const DAY_MS = 86_400_000;

type Batch = { readonly player: string; readonly owner: string; readonly samples: readonly Sample[] };
type Written = Omit<Ingested, 'uuid'>;

export function createPingService({ db, players, settings, now = Date.now }: PingServiceDeps): PingService {
  const repository = createPingRepository(db);
  // The queue's bound counts samples: one request may hold a thousand.
  const committer = createGroupCommitter<Batch, Written>(
    db,
    (transaction, batches) => writeBatches(transaction, batches, settings.historyPerDay, now()),
    { ...settings.groupCommit, maxQueue: settings.maxQueuedSamples },
    {},
    (batch) => batch.samples.length,
  );

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

  async function uuidOf(player: string, owner: string): Promise<string> {
    const resolved = await players.resolve(player, owner);
    if (!('uuid' in resolved)) throw AppError.of(ErrorKinds.PLAYER_NOT_FOUND);
    return resolved.uuid;
  }

  return {
    async ingest(player, inputs, owner) {
      const samples = timedSamples(inputs, now(), settings);
      const uuid = await uuidOf(player, owner);
      const { stored, duplicates } = await committer.submit({ player: uuid, owner, samples });
      return { uuid, stored, duplicates };
    },

    async history(player, range, owner) {
      if (range.from !== undefined && range.to !== undefined && range.from > range.to) {
        throw AppError.of(ErrorKinds.INVALID_FIELD, {
          cause: 'Invalid query string',
          reason: 'from must not be after to',
          developerReason: `query/from (${range.from}) must not be after query/to (${range.to})`,
        });
      }
      const uuid = await uuidOf(player, owner);
      const { revision, days } = await daysOf(uuid, await repository.revisionOf(uuid));
      return { uuid, revision, days: inRange(days, range) };
    },

    deleteExpired(stop) {
      const cutoff = now() - settings.retentionDays * DAY_MS;
      return deleteInBatches((limit) => repository.deleteSamplesBefore(cutoff, limit), stop);
    },

    close: () => committer.close(),
  };
}

/**
 * The samples with their times (when the batch was received, `receivedAt`, when not given); 400 naming each
 * one whose time is out of bounds, the first MAX_PROBLEMS (it stops looking there: a batch of bad times
 * costs no more than that).
 */
function timedSamples(
  inputs: readonly SampleInput[],
  receivedAt: number,
  { maxFutureMs, retentionDays }: Pick<PingSettings, 'maxFutureMs' | 'retentionDays'>,
): Sample[] {
  const latest = receivedAt + maxFutureMs;
  const earliest = receivedAt - retentionDays * DAY_MS;
  const problems: Problem[] = [];
  const samples: Sample[] = [];
  for (const [index, input] of inputs.entries()) {
    const at = input.at ?? receivedAt;
    const rule =
      at > latest
        ? `must be at most ${maxFutureMs / 1000} seconds after the request was received`
        : at < earliest
          ? `must be within the last ${retentionDays} days (the retention)`
          : undefined;
    if (rule === undefined) {
      // A lobby is its text however its characters are composed: `café` in NFC and in NFD is one lobby,
      // so a sample sent again in the other form is the same sample.
      samples.push({ at, ping: input.ping, lobby: input.lobby.normalize('NFC') });
      continue;
    }
    problems.push({
      kind: ErrorKinds.INVALID_FIELD,
      reason: `samples[${index}].at ${rule}`,
      developerReason: `body/samples/${index}/at ${rule}`,
    });
    if (problems.length === MAX_PROBLEMS) break;
  }
  if (problems.length > 0) throw new AppError(problems, { cause: 'Invalid request body' });
  return samples;
}

/**
 * One transaction's batches: each sample not stored yet is stored once (a repeat, within a batch or across
 * the transaction's batches, goes to the first batch that carries it), and each (player, day) the newly
 * stored samples fall on is updated once with those only; players, samples and days taken in order (so
 * that writers on several instances lock in the same order). Each batch answers how many of its samples
 * it stored, and how many were duplicates.
 */
async function writeBatches(
  transaction: Executor,
  batches: readonly Batch[],
  historyPerDay: number,
  now: number,
): Promise<Written[]> {
  const repository = createPingRepository(transaction);
  // Each distinct sample once, in the order it arrived, with the batch that carried it first.
  const claimedBy = new Map<string, number>();
  const byPlayer = new Map<string, OwnedSample[]>();
  for (const [index, { player, owner, samples }] of batches.entries()) {
    const claimed = byPlayer.get(player) ?? [];
    byPlayer.set(player, claimed);
    for (const sample of samples) {
      const key = keyOf(player, sample);
      if (claimedBy.has(key)) continue;
      claimedBy.set(key, index);
      claimed.push({ ...sample, owner });
    }
  }
  const stored = batches.map(() => 0);
  for (const player of [...byPlayer.keys()].sort()) {
    const claimed = byPlayer.get(player) ?? [];
    const fresh = new Set<string>();
    for (const sample of await repository.insertNewSamples(player, claimed)) {
      const key = keyOf(player, sample);
      const batch = claimedBy.get(key);
      // The database answers with what it was given: anything else is a bug, so roll back.
      if (batch === undefined || fresh.has(key)) throw new Error('a stored ping sample was not given once');
      fresh.add(key);
      stored[batch] = (stored[batch] ?? 0) + 1;
    }
    if (fresh.size === 0) continue;
    // Only the samples stored now count in their days, in the order they arrived.
    const samples = claimed.filter((sample) => fresh.has(keyOf(player, sample)));
    const byDay = new Map<string, Sample[]>();
    for (const sample of samples) {
      const day = dayOf(sample.at);
      const known = byDay.get(day);
      if (known) known.push(sample);
      else byDay.set(day, [sample]);
    }
    const revision = await repository.nextRevision(player, now);
    const aggregates = await repository.lockDays(player, [...byDay.keys()]);
    for (const [day, daySamples] of byDay)
      await repository.saveDay(
        player,
        addSamples(aggregates.get(day), day, daySamples, historyPerDay),
        revision,
      );
  }
  return batches.map((batch, index) => {
    const count = stored[index] ?? 0;
    return { stored: count, duplicates: batch.samples.length - count };
  });
}

/**
 * What makes a sample itself: equal keys are one sample. Unambiguous: a UUID, then two integers (no `:` in
 * any of them), then the lobby, whatever it holds.
 */
const keyOf = (player: string, { at, ping, lobby }: Sample): string => `${player}:${at}:${ping}:${lobby}`;

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
