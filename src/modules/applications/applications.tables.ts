/**
 * The applications module's tables. Conventions (docs/decisions.md): 64-bit Discord IDs are TEXT of decimal
 * digits; times are epoch milliseconds in BIGINT (PostgreSQL) / INTEGER (SQLite) columns, read as numbers.
 */
export type ApplicationsTables = {
  applications: ApplicationsTable;
  application_transitions: ApplicationTransitionsTable;
  application_owners: ApplicationOwnersTable;
  application_keys: ApplicationKeysTable;
};

/**
 * Each application's keys, newest last: at most one has not ended. `key_hash` is null until the owner
 * collects the key (SHA-256 of the secret, hex; the secret is never stored).
 */
export type ApplicationKeysTable = {
  id: string;
  application_id: string;
  key_hash: string | null;
  made_at: number;
  collected_at: number | null;
  /** When it was last exchanged for a token. */
  last_used_at: number | null;
  ended_at: number | null;
  /** `rotated`, `revoked` (by the owner) or `application_revoked`. */
  ended_reason: string | null;
};

export type ApplicationsTable = {
  id: string;
  owner: string;
  name: string;
  description: string;
  /** Space-separated grants. */
  grants: string;
  applied_at: number;
  state: string;
  /** The jti of the credential issued on approval: its chain is revoked with the application. */
  credential_jti: string | null;
};

/** Every state an application has been in: the first row is its creation (from_state null). */
export type ApplicationTransitionsTable = {
  application_id: string;
  /** 1, 2, ... per application. */
  seq: number;
  from_state: string | null;
  to_state: string;
  /** The Discord ID of whoever made the change, or `operator` for the command line. */
  actor: string;
  at: number;
  reason: string | null;
};

/**
 * One row per owner who ever applied. Creating an application first writes its owner's row, which makes
 * an owner's concurrent applications take turns, so the pending limit holds exactly.
 */
export type ApplicationOwnersTable = {
  owner: string;
  last_applied_at: number;
};
