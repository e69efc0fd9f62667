import { type Kysely, type Migration, SqliteAdapter, sql } from 'kysely';

/**
 * The owner "written before owners were recorded, by one of several": no token has it (owners are 1 to
 * 2^64-1). Also the column's default, so that an instance of the previous version still running during a
 * rolling deploy (which writes no owner) has its samples marked as not recorded rather than refused.
 */
const UNRECORDED_OWNER = '0';

/**
 * Ping samples record their writer, and are stored once. Existing samples get the one owner ever issued a
 * token carrying `ping:write` (only such a token could write them), or `0` when there were several or none.
 * Duplicates already stored are removed, the earliest row kept; the days' aggregates, which counted them,
 * are left as they are (their raw samples older than the retention are gone: they cannot be recomputed).
 */
export const pingOwners: Migration = {
  async up(db: Kysely<unknown>) {
    // Grants are kept space-separated. The grant's name as it was when this was written: a migration never
    // changes with the code.
    const holding = '% ping:write %';
    const { rows: writers } = await sql<{ owner: string }>`
      select distinct owner from tokens where ' ' || grants || ' ' like ${holding} limit 2`.execute(db);
    const owner = writers.length === 1 && writers[0] ? writers[0].owner : UNRECORDED_OWNER;

    // Of equal samples, the earliest row stays.
    await sql`
      delete from ping_samples where id in (
        select id from (
          select id, row_number() over (partition by player, at, ping, lobby order by id) as copy
          from ping_samples
        ) as copies
        where copy > 1
      )`.execute(db);

    if (db.getExecutor().adapter instanceof SqliteAdapter) {
      // SQLite cannot change a column's default: the rows that exist are given their owner afterwards.
      await db.schema
        .alterTable('ping_samples')
        .addColumn('owner', 'text', (column) => column.notNull().defaultTo(UNRECORDED_OWNER))
        .execute();
      if (owner !== UNRECORDED_OWNER) await sql`update ping_samples set owner = ${owner}`.execute(db);
    } else {
      // The rows that exist read the default the column was added with (no table rewrite); new rows get
      // the one set after.
      await db.schema
        .alterTable('ping_samples')
        .addColumn('owner', 'text', (column) => column.notNull().defaultTo(owner))
        .execute();
      await db.schema
        .alterTable('ping_samples')
        .alterColumn('owner', (column) => column.setDefault(UNRECORDED_OWNER))
        .execute();
    }

    // A sample is stored once, whoever writes it: writers on several instances meet on this index.
    await db.schema
      .createIndex('ping_samples_once')
      .on('ping_samples')
      .columns(['player', 'at', 'ping', 'lobby'])
      .unique()
      .execute();
  },
};
