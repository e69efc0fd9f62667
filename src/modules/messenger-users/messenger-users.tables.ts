/**
 * The messenger users module's tables. Conventions (docs/decisions.md): Discord IDs (snowflakes) are TEXT of
 * decimal digits; times are epoch milliseconds in BIGINT (PostgreSQL) / INTEGER (SQLite) columns.
 */
export type MessengerUsersTables = {
  messenger_users: MessengerUsersTable;
  linked_accounts: LinkedAccountsTable;
};

export type MessengerUsersTable = {
  snowflake: string;
  /** BCP 47, canonical. */
  locale: string;
  /** The Discord username the request that created the user gave, for verification (when logs have none). */
  username: string | null;
  created_at: number;
  updated_at: number;
};

/** A Minecraft account linked to a user: the UUID is the key, so an account belongs to one user at most. */
export type LinkedAccountsTable = {
  /** Undashed lowercase. */
  uuid: string;
  snowflake: string;
  /** 1 for the user's primary account (a partial unique index allows one per user), else 0. */
  is_primary: number;
  linked_at: number;
};
