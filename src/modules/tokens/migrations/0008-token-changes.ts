import { type Kysely, type Migration, SqliteAdapter, sql } from 'kysely';

/**
 * A mark that moves with every change to an issued token that makes a kept record of it wrong: a
 * revocation, or a deletion. The database moves it itself, whoever writes: instances that keep token
 * records in process read it about once a second and drop their copies when it moved, so that a change
 * nobody told them of (a publish that failed, the command line run without Redis) is still heard.
 * Inserts and rotations leave it alone: a new token makes no copy wrong, and a rotation changes nothing a
 * request is authenticated by (an instance's copies survive the refreshes, which are frequent).
 */
export const tokenChanges: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('token_changes')
      .addColumn('id', 'integer', (column) => column.primaryKey().check(sql`id = 1`))
      .addColumn('serial', 'bigint', (column) => column.notNull())
      .execute();
    await sql`insert into token_changes (id, serial) values (1, 0)`.execute(db);
    const bump = 'update token_changes set serial = serial + 1 where id = 1';
    if (db.getExecutor().adapter instanceof SqliteAdapter) {
      await sql
        .raw(
          `create trigger tokens_revoked after update of revoked_at on tokens
           when old.revoked_at is not new.revoked_at begin ${bump}; end`,
        )
        .execute(db);
      await sql.raw(`create trigger tokens_deleted after delete on tokens begin ${bump}; end`).execute(db);
      return;
    }
    await sql
      .raw(
        `create function tokens_changed() returns trigger language plpgsql as $$
         begin ${bump}; return null; end $$`,
      )
      .execute(db);
    // Row by row, and only for a revocation or a deletion: only those transactions take the mark's row
    // lock (after their token rows'), so refreshes never queue on it. Two revocations of one chain meet
    // on the chain's rows first; of two chains, on the mark only: neither waits for what the other holds.
    await sql`
      create trigger tokens_revoked after update of revoked_at on tokens for each row
      when (old.revoked_at is distinct from new.revoked_at) execute function tokens_changed()`.execute(db);
    await sql`
      create trigger tokens_deleted after delete on tokens for each row execute function tokens_changed()`.execute(
      db,
    );
  },
};
