/**
 * The players module's history tables (migrations/0019-player-history.ts): each player's snapshots, and
 * the latest of them. Times are epoch milliseconds.
 */
export type PlayerHistoryTables = {
  player_history: PlayerHistoryTable;
  player_history_heads: PlayerHistoryHeadsTable;
};

export type PlayerHistoryTable = {
  uuid: string;
  /** The player's snapshots counted from 1, with no gap (retention removes the oldest). */
  seq: number;
  /** When the fetch was made; never earlier than the player's previous snapshot. */
  at: number;
  /** The full copy this row's changes are against: the row itself when it is one. */
  base_seq: number;
  /** A full copy: Brotli of the player's JSON. Changes: raw DEFLATE of their JSON (json-changes.ts). */
  body: Buffer;
  /** The owner whose lookup made the fetch: TEXT of digits; null for the service's own. */
  fetched_by: string | null;
};

export type PlayerHistoryHeadsTable = {
  uuid: string;
  /** The latest snapshot's seq (0: none yet), and its time. */
  seq: number;
  at: number;
  /** Its full copy's seq and time, and that copy's stored size. */
  base_seq: number;
  base_at: number;
  base_bytes: number;
  /** How many snapshots of changes follow that full copy, and the latest one's stored size. */
  since_base: number;
  changes_bytes: number;
  /** A digest of the latest snapshot's changes against its full copy: equal data, equal digest. */
  digest: string;
};
