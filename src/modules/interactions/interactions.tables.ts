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

/**
 * Every Discord user the logs mentioned, per owner (the key is owner and user): the username that owner's
 * logs last gave, first and last seen in them. Owner `0` holds rows kept from before owners, which no
 * token's owner reads (docs/decisions.md).
 */
export type InteractionUsersTable = {
  owner: string;
  user_id: string;
  username: string;
  first_seen_at: number;
  last_seen_at: number;
};

/** Every server the logs mentioned, per owner as users are: the name that owner's logs last gave. */
export type InteractionServersTable = {
  owner: string;
  server_id: string;
  server_name: string | null;
  first_seen_at: number;
  last_seen_at: number;
};
