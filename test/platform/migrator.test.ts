import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { it } from 'node:test';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config.js';
import { createDatabase } from '../../src/platform/db/database.js';
import { migrateToLatest, pendingMigrations } from '../../src/platform/db/migrator.js';
import { describeOrSkip } from '../helpers/backends.js';
import { allDialects, skipOn } from '../helpers/environment.js';
import { nodeArgs } from '../helpers/node-process.js';
import { sampleMigrations } from '../helpers/sample-migrations.js';
import { createTestDatabase } from '../helpers/test-database.js';

const run = promisify(execFile);

for (const dialect of allDialects) {
  describeOrSkip(`migrations on ${dialect}`, { skip: skipOn(dialect) }, () => {
    it('apply in order once, and report nothing pending afterwards', async (t) => {
      const database = await createTestDatabase(dialect);
      const db = createDatabase(loadConfig({ DATABASE_URL: database.url }).database);
      t.after(async () => {
        await db.destroy();
        await database.drop();
      });
      const runs: string[] = [];
      const migrations = sampleMigrations(runs);
      assert.deepEqual(await pendingMigrations(db, migrations), ['0001-widgets', '0002-widget-names']);
      const applied = await migrateToLatest(db, migrations);
      assert.deepEqual(
        applied.map((result) => [result.migrationName, result.status]),
        [
          ['0001-widgets', 'Success'],
          ['0002-widget-names', 'Success'],
        ],
      );
      assert.deepEqual(await migrateToLatest(db, migrations), []);
      assert.deepEqual(await pendingMigrations(db, migrations), []);
      assert.deepEqual(runs, ['0001', '0002']);
      await sql`insert into widgets (id, name) values (1, 'a')`.execute(db);
    });

    it('run once when two instances start against one database at the same moment', async (t) => {
      const database = await createTestDatabase(dialect);
      t.after(() => database.drop());
      const runs: string[] = [];
      if (dialect === 'postgres') {
        // Two connection pools in this process are two sessions to PostgreSQL, as two instances would be.
        const instances = [0, 1].map(() =>
          createDatabase(loadConfig({ DATABASE_URL: database.url }).database),
        );
        t.after(() => Promise.all(instances.map((db) => db.destroy())));
        await Promise.all(instances.map((db) => migrateToLatest(db, sampleMigrations(runs, 300))));
      } else {
        // SQLite locks per process and better-sqlite3 waits for a lock synchronously: two processes.
        const instance = () =>
          run(process.execPath, nodeArgs('test/helpers/migrate-sample.ts'), {
            env: { ...process.env, DATABASE_URL: database.url },
          });
        const outputs = await Promise.all([instance(), instance()]);
        runs.push(...outputs.flatMap(({ stdout }) => (JSON.parse(stdout) as { runs: string[] }).runs));
      }
      assert.deepEqual(runs.sort(), ['0001', '0002']);
      const db = createDatabase(loadConfig({ DATABASE_URL: database.url }).database);
      t.after(() => db.destroy());
      assert.deepEqual(await pendingMigrations(db, sampleMigrations([])), []);
    });

    it('keep deployments in different schemas (or files) of one server apart', async (t) => {
      const [one, two] = [await createTestDatabase(dialect), await createTestDatabase(dialect)];
      const first = createDatabase(loadConfig({ DATABASE_URL: one.url }).database);
      const second = createDatabase(loadConfig({ DATABASE_URL: two.url }).database);
      t.after(async () => {
        await first.destroy();
        await second.destroy();
        await one.drop();
        await two.drop();
      });
      await migrateToLatest(first, sampleMigrations([], 0));
      await migrateToLatest(second, sampleMigrations([], 0));
      assert.deepEqual(await pendingMigrations(second, sampleMigrations([], 0)), []);
      await sql`insert into widgets (id, name) values (1, 'b')`.execute(second);
    });

    it('leave nothing behind when a migration fails', async (t) => {
      const database = await createTestDatabase(dialect);
      const db = createDatabase(loadConfig({ DATABASE_URL: database.url }).database);
      t.after(async () => {
        await db.destroy();
        await database.drop();
      });
      const failing = {
        ...sampleMigrations([], 0),
        '0003-broken': {
          async up() {
            throw new Error('broken migration');
          },
        },
      };
      await assert.rejects(migrateToLatest(db, failing), /broken migration/);
      assert.deepEqual(await pendingMigrations(db, failing), [
        '0001-widgets',
        '0002-widget-names',
        '0003-broken',
      ]);
      await assert.rejects(sql`select * from widgets`.execute(db));
    });
  });
}
