import type { Generated } from 'kysely';

/**
 * The tokens module's tables. Conventions (docs/decisions.md): 64-bit Discord IDs are TEXT of decimal
 * digits; times are epoch milliseconds in BIGINT (PostgreSQL) / INTEGER (SQLite) columns, read as numbers.
 */
export type TokensTables = {
  tokens: TokensTable;
  /** One row: a serial the database moves with every revocation or deletion of a token (triggers). */
  token_changes: { id: number; serial: number };
};

export type TokensTable = {
  jti: string;
  owner: string;
  /** Space-separated grants. */
  grants: string;
  /** The jti of the first token of the chain. */
  chain_id: string;
  rotated_from: string | null;
  /**
   * What the chain was made from: an application key's id, or `session:<hash>` for a portal session's
   * identity token; null when an operator issued it.
   */
  key_id: Generated<string | null>;
  /** When the chain ends (a portal session's end), if it does: no token of it outlives it. */
  chain_ends_at: Generated<number | null>;
  issued_at: number;
  expires_at: number;
  rotated_at: Generated<number | null>;
  revoked_at: Generated<number | null>;
  revoked_reason: Generated<string | null>;
};
