import { databaseOf, type Executor } from './transactions.js';

interface LeasesTable {
  name: string;
  holder: string;
  expires_at: number | bigint;
}

/**
 * Takes the named lease for `holder` until `expiresAt` when nobody holds it at `now` (it never existed, or
 * its holder's time ran out); true when this call took it. Instances sharing a database race for it, and
 * exactly one wins each period: the take is one conditional update, whose row count says who won.
 */
export async function takeLease(
  executor: Executor,
  lease: { readonly name: string; readonly holder: string; readonly now: number; readonly expiresAt: number },
): Promise<boolean> {
  const db = databaseOf(executor).withTables<{ leases: LeasesTable }>();
  await db
    .insertInto('leases')
    .values({ name: lease.name, holder: '', expires_at: 0 })
    .onConflict((conflict) => conflict.column('name').doNothing())
    .execute();
  const taken = await db
    .updateTable('leases')
    .set({ holder: lease.holder, expires_at: lease.expiresAt })
    .where('name', '=', lease.name)
    .where('expires_at', '<=', lease.now)
    .executeTakeFirst();
  return taken.numUpdatedRows === 1n;
}

/** Extends the named lease to `expiresAt` if `holder` still holds it; whether it did. */
export async function renewLease(
  executor: Executor,
  lease: { readonly name: string; readonly holder: string; readonly expiresAt: number },
): Promise<boolean> {
  const db = databaseOf(executor).withTables<{ leases: LeasesTable }>();
  const renewed = await db
    .updateTable('leases')
    .set({ expires_at: lease.expiresAt })
    .where('name', '=', lease.name)
    .where('holder', '=', lease.holder)
    .executeTakeFirst();
  return renewed.numUpdatedRows === 1n;
}
