/**
 * The players module's tables: the players the service has fetched, the names it saw them under, and the
 * latest copy of each. Times are epoch milliseconds (see docs/decisions.md).
 */
export type PlayersTables = {
  players: PlayersTable;
  player_names: PlayerNamesTable;
  player_snapshots: PlayerSnapshotsTable;
};

export type PlayersTable = {
  /** Undashed lowercase. */
  uuid: string;
  name: string | null;
  first_fetched_at: number;
  last_fetched_at: number;
  fetch_count: number;
  /**
   * The owner whose lookup made the last fetch (the one charged for it): TEXT of digits; null for the
   * service's own lookups, and for fetches made before owners were recorded.
   */
  last_fetched_by: string | null;
};

export type PlayerNamesTable = {
  uuid: string;
  /** The name lowercased: names are unique without regard to case. */
  name_key: string;
  name: string;
  first_seen_at: number;
  last_seen_at: number;
};

export type PlayerSnapshotsTable = {
  uuid: string;
  /** The player object as the upstream sent it, JSON. */
  body: string;
  fetched_at: number;
  /** The owner whose lookup fetched this copy (see players.last_fetched_by). */
  fetched_by: string | null;
};
