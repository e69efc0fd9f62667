import type { Executor } from '../../platform/db/transactions.js';
import { type FieldProblem, InputError, MAX_PROBLEMS } from '../../platform/errors.js';
import { DAY_MS, dayOf } from '../../platform/utc-day.js';
import { createPingRepository, type DayAggregate, type OwnedSample, type Sample } from './ping.repository.js';

/*
 * The write path of ping samples: a batch's times checked against the clock, and a transaction's batches
 * stored once each with the days they fall on updated (ping.service.ts queues them for group commit).
 */

/** The most characters a lobby has, as sent and as kept (composed, NFC). */
export const LOBBY_MAX_LENGTH = 64;
const LOBBY_COMPOSED_RULE = `must be at most ${LOBBY_MAX_LENGTH} characters once composed (Unicode NFC)`;

/** A sample as a client sends it: `at` (epoch ms) defaults to when it arrives. */
export interface SampleInput {
  readonly ping: number;
  readonly lobby: string;
  readonly at?: number;
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

/**
 * How long a raw sample is kept past the window samples are accepted in (`PING_RETENTION_DAYS`). A sample is
 * accepted by its time when its batch arrives and stored once by its raw row; a batch accepted just inside
 * the window may wait for its commit (a username to resolve, the group commit's queue, a slow database),
 * and a resend of a sample whose row the retention had deleted meanwhile was stored again, its day counting
 * it twice (a hostile review found it). A day is far beyond any wait a request survives.
 */
export const RESEND_MARGIN_MS = DAY_MS;

/** One request's samples for one player, written by `owner`; a transaction commits several. */
export type Batch = { readonly player: string; readonly owner: bigint; readonly samples: readonly Sample[] };
/** What became of a batch. */
export type Written = Omit<Ingested, 'uuid'>;

/**
 * The samples with their times (when the batch was received, `receivedAt`, when not given) and lobbies
 * composed (NFC); 400 naming each one whose time is out of bounds or whose lobby composed is longer than
 * LOBBY_MAX_LENGTH, the first MAX_PROBLEMS (it stops looking there: a batch of bad times
 * costs no more than that).
 */
export function timedSamples(
  inputs: readonly SampleInput[],
  receivedAt: number,
  { maxFutureMs, retentionDays }: { readonly maxFutureMs: number; readonly retentionDays: number },
): Sample[] {
  const latest = receivedAt + maxFutureMs;
  const earliest = receivedAt - retentionDays * DAY_MS;
  const problems: FieldProblem[] = [];
  const samples: Sample[] = [];
  for (const [index, input] of inputs.entries()) {
    const at = input.at ?? receivedAt;
    const rule =
      at > latest
        ? `must be at most ${maxFutureMs / 1000} seconds after the request was received`
        : at < earliest
          ? `must be within the last ${retentionDays} days (the retention)`
          : undefined;
    // A lobby is its text however its characters are composed: `café` in NFC and in NFD is one lobby,
    // so a sample sent again in the other form is the same sample. Composing may lengthen it (U+FB2C
    // is three characters composed): the bound holds for what is kept.
    const lobby = input.lobby.normalize('NFC');
    const problem: FieldProblem | undefined =
      rule !== undefined
        ? { field: ['samples', index, 'at'], rule }
        : lobby !== input.lobby && [...lobby].length > LOBBY_MAX_LENGTH
          ? { field: ['samples', index, 'lobby'], rule: LOBBY_COMPOSED_RULE }
          : undefined;
    if (problem === undefined) {
      samples.push({ at, ping: input.ping, lobby });
      continue;
    }
    problems.push(problem);
    if (problems.length === MAX_PROBLEMS) break;
  }
  if (problems.length > 0) throw new InputError(problems);
  return samples;
}

/**
 * One transaction's batches: each sample not stored yet is stored once (a repeat, within a batch or across
 * the transaction's batches, goes to the first batch that carries it), and each (player, day) the newly
 * stored samples fall on is updated once with those only; players, samples and days taken in order (so
 * that writers on several instances lock in the same order). Each batch answers how many of its samples
 * it stored, and how many were duplicates.
 */
export async function writeBatches(
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
