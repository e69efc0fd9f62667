import type { Generated } from 'kysely';

/**
 * The database's tables as Kysely sees them; modules add theirs here with their migrations.
 * Conventions (docs/decisions.md): 64-bit Discord IDs are TEXT of decimal digits; times are epoch
 * milliseconds in BIGINT (PostgreSQL) / INTEGER (SQLite) columns, read back as numbers.
 */
export interface Tables {
  tokens: TokensTable;
  players: PlayersTable;
  player_names: PlayerNamesTable;
  player_snapshots: PlayerSnapshotsTable;
}

export interface PlayersTable {
  /** Undashed lowercase. */
  uuid: string;
  name: string | null;
  first_fetched_at: number;
  last_fetched_at: number;
  fetch_count: number;
}

export interface PlayerNamesTable {
  uuid: string;
  /** The name lowercased: names are unique without regard to case. */
  name_key: string;
  name: string;
  first_seen_at: number;
  last_seen_at: number;
}

export interface PlayerSnapshotsTable {
  uuid: string;
  /** The player object as the upstream sent it, JSON. */
  body: string;
  fetched_at: number;
}

export interface TokensTable {
  jti: string;
  owner: string;
  /** Space-separated grants. */
  grants: string;
  /** The jti of the first token of the chain. */
  chain_id: string;
  rotated_from: string | null;
  issued_at: number;
  expires_at: number;
  rotated_at: Generated<number | null>;
  revoked_at: Generated<number | null>;
  revoked_reason: Generated<string | null>;
}
