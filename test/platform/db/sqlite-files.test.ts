import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { createDatabase } from '../../../src/platform/db/database.js';

describe('SQLite files and transactions', () => {
  it('are created private: the directory 0700, the database and its WAL files 0600', async (t) => {
    const parent = await mkdtemp(join(tmpdir(), 'pds-sqlite-'));
    t.after(() => rm(parent, { recursive: true, force: true }));
    const dir = join(parent, 'data');
    const db = createDatabase({ dialect: 'sqlite', path: join(dir, 'service.sqlite') });
    t.after(() => db.destroy());
    await sql`create table notes (body text)`.execute(db);
    await sql`insert into notes values ('kept')`.execute(db);
    assert.equal((await stat(dir)).mode & 0o777, 0o700);
    const files = await readdir(dir);
    assert.deepEqual(files.sort(), ['service.sqlite', 'service.sqlite-shm', 'service.sqlite-wal']);
    for (const file of files) assert.equal((await stat(join(dir, file))).mode & 0o777, 0o600, file);
  });

  it('fail a transaction SQLite rolled back by itself with the error that made it, not its rollback’s', async (t) => {
    const parent = await mkdtemp(join(tmpdir(), 'pds-sqlite-'));
    t.after(() => rm(parent, { recursive: true, force: true }));
    const db = createDatabase({ dialect: 'sqlite', path: join(parent, 'service.sqlite') });
    t.after(() => db.destroy());
    await sql`create table notes (body text)`.execute(db);
    // RAISE(ROLLBACK) ends the whole transaction, as SQLite does on a full disk or an I/O error.
    await sql`create trigger refuse before insert on notes when new.body = 'refused'
      begin select raise(rollback, 'refused by the trigger'); end`.execute(db);
    const failed = await db
      .transaction()
      .execute(async (transaction) => {
        await sql`insert into notes values ('kept only if committed')`.execute(transaction);
        await sql`insert into notes values ('refused')`.execute(transaction);
      })
      .then(
        () => assert.fail('committed'),
        (error: Error & { code?: string }) => error,
      );
    assert.equal(failed.message, 'refused by the trigger');
    assert.equal(failed.code, 'SQLITE_CONSTRAINT_TRIGGER');
    assert.deepEqual((await sql`select body from notes`.execute(db)).rows, []);
    // The connection goes on: a transaction after it commits.
    await db
      .transaction()
      .execute((transaction) => sql`insert into notes values ('next')`.execute(transaction));
    assert.deepEqual((await sql`select body from notes`.execute(db)).rows, [{ body: 'next' }]);
  });
});
