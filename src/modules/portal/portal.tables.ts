/**
 * The portal module's tables. Conventions (docs/decisions.md): 64-bit Discord IDs are TEXT of decimal
 * digits; times are epoch milliseconds in BIGINT (PostgreSQL) / INTEGER (SQLite) columns, read as numbers.
 */
export type PortalTables = {
  sign_in_attempts: SignInAttemptsTable;
  portal_sessions: PortalSessionsTable;
};

/** A sign-in under way: the browser went to Discord and has not come back yet. Used once. */
export type SignInAttemptsTable = {
  /** SHA-256 of the `state` (hex). */
  state_hash: string;
  /** Where the browser goes once signed in: a path of the portal. */
  return_to: string;
  expires_at: number;
};

export type PortalSessionsTable = {
  /** SHA-256 of the session's cookie value (hex): the value itself is never stored. */
  id_hash: string;
  /** The signed-in Discord user: the owner. */
  owner: string;
  username: string;
  global_name: string | null;
  created_at: number;
  expires_at: number;
  /** When the developer signed out. */
  ended_at: number | null;
};
