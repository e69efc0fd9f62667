import { tablesOf } from '../../platform/db/repository-view.js';
import type { Executor } from '../../platform/db/transactions.js';
import type { MessengerUsersTables } from './messenger-users.tables.js';

export interface UserRecord {
  readonly snowflake: bigint;
  readonly locale: string;
  readonly username: string | null;
}

export interface LinkedAccount {
  /** Undashed lowercase Minecraft UUID. */
  readonly uuid: string;
  readonly snowflake: bigint;
  readonly primary: boolean;
  readonly linkedAt: number;
}

/**
 * All SQL about messenger users and their linked accounts in one owner's view, run on `executor`: the
 * database, or a transaction the service started. Every statement reads and writes `owner`'s rows only.
 * Times are epoch milliseconds.
 */
export function createMessengerUsersRepository(executor: Executor, owner: bigint) {
  const db = tablesOf<MessengerUsersTables>(executor);
  const ownerText = owner.toString();
  const users = () => db.selectFrom('messenger_users').where('owner', '=', ownerText);
  const accounts = () => db.selectFrom('linked_accounts').where('owner', '=', ownerText);
  return {
    async findUser(snowflake: bigint): Promise<UserRecord | undefined> {
      const row = await users()
        .select(['snowflake', 'locale', 'username'])
        .where('snowflake', '=', snowflake.toString())
        .executeTakeFirst();
      return row && { snowflake: BigInt(row.snowflake), locale: row.locale, username: row.username };
    },

    /** Creates the user unless it exists (then leaves it as it is). */
    async createUser(user: UserRecord, at: number): Promise<void> {
      await db
        .insertInto('messenger_users')
        .values({
          owner: ownerText,
          snowflake: user.snowflake.toString(),
          locale: user.locale,
          username: user.username,
          created_at: at,
          updated_at: at,
        })
        .onConflict((conflict) => conflict.columns(['owner', 'snowflake']).doNothing())
        .execute();
    },

    /**
     * Marks the user changed: the first statement of each change to a user's accounts, so that on
     * PostgreSQL its row lock makes one user's concurrent changes take turns (SQLite has one writer).
     * Whether the user exists.
     */
    async touchUser(snowflake: bigint, at: number): Promise<boolean> {
      const result = await db
        .updateTable('messenger_users')
        .set({ updated_at: at })
        .where('owner', '=', ownerText)
        .where('snowflake', '=', snowflake.toString())
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async setLocale(snowflake: bigint, locale: string, at: number): Promise<void> {
      await db
        .updateTable('messenger_users')
        .set({ locale, updated_at: at })
        .where('owner', '=', ownerText)
        .where('snowflake', '=', snowflake.toString())
        .execute();
    },

    /** The user's accounts: the primary first, then in link order. */
    async accountsOf(snowflake: bigint): Promise<LinkedAccount[]> {
      const rows = await accounts()
        .selectAll()
        .where('snowflake', '=', snowflake.toString())
        .orderBy('is_primary', 'desc')
        .orderBy('linked_at')
        .orderBy('uuid')
        .execute();
      return rows.map((row) => ({
        uuid: row.uuid,
        snowflake: BigInt(row.snowflake),
        primary: row.is_primary === 1,
        linkedAt: Number(row.linked_at),
      }));
    },

    /** Who the account is linked to in this owner's view, if anyone. */
    async holderOf(uuid: string): Promise<bigint | undefined> {
      const row = await accounts().select('snowflake').where('uuid', '=', uuid).executeTakeFirst();
      return row && BigInt(row.snowflake);
    },

    /**
     * Links the account to the user unless it is linked already (to anyone in this owner's view); whether
     * this call linked it. A concurrent link of the same account by another user of the view waits for that
     * one to end, then links nothing.
     */
    async link(account: LinkedAccount): Promise<boolean> {
      const result = await db
        .insertInto('linked_accounts')
        .values({
          owner: ownerText,
          uuid: account.uuid,
          snowflake: account.snowflake.toString(),
          is_primary: account.primary ? 1 : 0,
          linked_at: account.linkedAt,
        })
        .onConflict((conflict) => conflict.columns(['owner', 'uuid']).doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
    },

    /** Unlinks the account from the user; whether it was linked to them, and whether it was their primary. */
    async unlink(snowflake: bigint, uuid: string): Promise<{ primary: boolean } | undefined> {
      const row = await db
        .deleteFrom('linked_accounts')
        .where('owner', '=', ownerText)
        .where('snowflake', '=', snowflake.toString())
        .where('uuid', '=', uuid)
        .returning('is_primary')
        .executeTakeFirst();
      return row && { primary: row.is_primary === 1 };
    },

    /** The user has no primary account any more (before another becomes it: one primary at a time). */
    async clearPrimary(snowflake: bigint): Promise<void> {
      await db
        .updateTable('linked_accounts')
        .set({ is_primary: 0 })
        .where('owner', '=', ownerText)
        .where('snowflake', '=', snowflake.toString())
        .where('is_primary', '=', 1)
        .execute();
    },

    /** Makes the user's account their primary; whether it is linked to them. Clear the primary first. */
    async makePrimary(snowflake: bigint, uuid: string): Promise<boolean> {
      const result = await db
        .updateTable('linked_accounts')
        .set({ is_primary: 1 })
        .where('owner', '=', ownerText)
        .where('snowflake', '=', snowflake.toString())
        .where('uuid', '=', uuid)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
  };
}

export type MessengerUsersRepository = ReturnType<typeof createMessengerUsersRepository>;
