import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { createDatabase } from '../../../src/platform/db/database.js';

describe('SQLite files', () => {
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
});
