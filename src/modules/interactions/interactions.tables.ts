/**
 * The interactions module's tables. Conventions (docs/decisions.md): 64-bit Discord IDs are TEXT of decimal
 * digits; times are epoch milliseconds in BIGINT (PostgreSQL) / INTEGER (SQLite) columns, read as numbers.
 * The interaction token is never stored: only its keyed fingerprint.
 */
export type InteractionsTables = {
  interaction_logs: InteractionLogsTable;
  interaction_users: InteractionUsersTable;
  interaction_servers: InteractionServersTable;
};

export type InteractionLogsTable = {
  id: string;
  /** HMAC-SHA256 of the owner and the interaction token under a server key: spots an owner logging one interaction twice. */
  fingerprint: string;
  received_at: number;
  /** The owner of the token that logged it. */
  owner: string;
  user_id: string;
  server_id: string | null;
  /** The log as received, without the interaction token, as JSON (IDs as integer digits). */
  document: string;
};

/** Every Discord user the logs mentioned: the username last seen, first and last seen. */
export type InteractionUsersTable = {
  user_id: string;
  username: string;
  first_seen_at: number;
  last_seen_at: number;
};

export type InteractionServersTable = {
  server_id: string;
  server_name: string | null;
  first_seen_at: number;
  last_seen_at: number;
};
