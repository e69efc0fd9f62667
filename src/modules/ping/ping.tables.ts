import type { Generated } from 'kysely';

/**
 * The ping module's tables. Times are epoch milliseconds in BIGINT columns, read as numbers; a day is the
 * UTC calendar day `YYYY-MM-DD`; a player is an undashed lowercase UUID.
 */
export type PingTables = {
  ping_samples: PingSamplesTable;
  ping_days: PingDaysTable;
  ping_players: PingPlayersTable;
};

/**
 * Every sample as it came in, once: (player, at, ping, lobby) is unique, so a replayed sample is not stored
 * again. Deleted after the retention (the days keep their statistics).
 */
export type PingSamplesTable = {
  id: Generated<number | bigint>;
  player: string;
  at: number | bigint;
  ping: number;
  lobby: string;
  /**
   * The owner whose token wrote it (TEXT of decimal digits); `0` for a sample written before owners were
   * recorded, by one of several writers (migration 0011).
   */
  owner: string;
};

/** One player's day: its statistics over every sample, and its history (the latest samples, capped). */
export type PingDaysTable = {
  player: string;
  day: string;
  samples: number | bigint;
  total: number | bigint;
  min: number;
  max: number;
  /** The day's last sample (by its time): when, and in which lobby. */
  last_at: number | bigint;
  last_lobby: string;
  /** The history's ping values in time order, as a JSON array: sent as it is. */
  history: string;
  /** The history's sample times, as a JSON array beside it: where a late sample goes. */
  history_at: string;
  /** The player's revision when this day last changed (0: before revisions were kept, migration 0018). */
  revision: number | bigint;
};

/**
 * A player's ping revision: moved by every transaction that stores a sample of theirs, never back (at least
 * one more, and at least the writer's clock in epoch ms, so that a database restored or replaced does not
 * hand out a revision a reader has seen with other days). No row: revision 0.
 */
export type PingPlayersTable = {
  player: string;
  revision: number | bigint;
};
