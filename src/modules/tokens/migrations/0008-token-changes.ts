import { type Kysely, type Migration, SqliteAdapter, sql } from 'kysely';

/**
 * A mark that moves with every change to an issued token (a revocation, a rotation, a deletion), moved by
 * the database itself whoever writes: instances that keep token records in process read it about once a
 * second and drop their copies when it moved, so that a change nobody told them of (a publish that failed,
 * the command line run without Redis) is still heard. Inserts leave it alone: a new token makes no copy
 * stale.
 */
export const tokenChanges: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('token_changes')
      .addColumn('id', 'integer', (column) => column.primaryKey().check(sql`id = 1`))
      .addColumn('serial', 'bigint', (column) => column.notNull())
      .execute();
    await sql`insert into token_changes (id, serial) values (1, 0)`.execute(db);
    if (db.getExecutor().adapter instanceof SqliteAdapter) {
      for (const event of ['update', 'delete'])
        await sql
          .raw(
            `create trigger tokens_changed_by_${event} after ${event} on tokens
             begin update token_changes set serial = serial + 1 where id = 1; end`,
          )
          .execute(db);
      return;
    }
    await sql`
      create function tokens_changed() returns trigger language plpgsql as $$
      begin
        update token_changes set serial = serial + 1 where id = 1;
        return null;
      end $$`.execute(db);
    // Before the statement, so a transaction takes the mark's row lock before any token row's: two
    // transactions changing tokens then queue on the mark, and never each hold what the other waits for.
    await sql`
      create trigger tokens_changed before update or delete on tokens
      for each statement execute function tokens_changed()`.execute(db);
  },
};
