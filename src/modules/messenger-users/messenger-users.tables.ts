/**
 * The messenger users module's tables. Conventions (docs/decisions.md): Discord IDs (snowflakes) and owners
 * are TEXT of decimal digits; times are epoch milliseconds in BIGINT (PostgreSQL) / INTEGER (SQLite) columns.
 * Every row belongs to an owner's view (the owner whose token wrote it); owner `0` holds rows kept from
 * before owners, which only an auditor reads.
 */
export type MessengerUsersTables = {
  messenger_users: MessengerUsersTable;
  linked_accounts: LinkedAccountsTable;
};

/** A user in one owner's view: the key is (owner, snowflake). */
export type MessengerUsersTable = {
  owner: string;
  snowflake: string;
  /** BCP 47, canonical. */
  locale: string;
  /** The Discord username the request that created the user gave, for verification (when logs have none). */
  username: string | null;
  created_at: number;
  updated_at: number;
};

/**
 * A Minecraft account linked to a user of an owner's view: the key is (owner, uuid), so an account belongs to
 * one user at most in each owner's view.
 */
export type LinkedAccountsTable = {
  owner: string;
  /** Undashed lowercase. */
  uuid: string;
  snowflake: string;
  /** 1 for the user's primary account (a partial unique index allows one per owner and user), else 0. */
  is_primary: number;
  linked_at: number;
};
