import { createHash, randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import pg from 'pg';
import { migrations } from '../../src/migrations.js';
import { createDatabase } from '../../src/platform/db/database.js';
import { migrateToLatest } from '../../src/platform/db/migrator.js';
import { type Dialect, testDatabaseUrl } from './environment.js';

export interface TestDatabase {
  readonly dialect: Dialect;
  /** A DATABASE_URL for the service: its own SQLite file, or its own PostgreSQL database. */
  readonly url: string;
  drop(): Promise<void>;
}

export interface TestDatabaseOptions {
  /**
   * Already at the latest migration: a copy of a database migrated once (per process on SQLite, per set of
   * migrations on PostgreSQL), instead of running every migration again. Empty otherwise.
   */
  readonly migrated?: boolean;
}

/**
 * A fresh database for one test: nothing it writes is seen by any other test, even in parallel. On
 * PostgreSQL, a database of its own on TEST_DATABASE_URL's server (dropped with whatever is still connected
 * to it); on SQLite, a file in a directory of its own.
 */
export async function createTestDatabase(
  dialect: Dialect,
  { migrated = false }: TestDatabaseOptions = {},
): Promise<TestDatabase> {
  if (dialect === 'sqlite') {
    const dir = await mkdtemp(join(tmpdir(), 'pds-test-'));
    const path = join(dir, 'service.sqlite');
    if (migrated) await copyFile(await sqliteTemplate(), path);
    return { dialect, url: `sqlite:${path}`, drop: () => rm(dir, { recursive: true, force: true }) };
  }
  if (!testDatabaseUrl) throw new Error('TEST_DATABASE_URL is not set');
  const name = `pds_test_${randomBytes(8).toString('hex')}`;
  const template = migrated ? await postgresTemplate() : undefined;
  await withAdmin((client) =>
    client.query(`create database ${name}${template ? ` template ${template} strategy wal_log` : ''}`),
  );
  return {
    dialect,
    url: databaseUrl(name),
    drop: async () => dropLater(name),
  };
}

/**
 * Databases to drop, one after another, off the tests' path: a drop waits on every backend of the server
 * (hundreds of milliseconds when it is busy), which no test needs to wait for. The file's last hook waits
 * for them all, and fails the file if one could not be dropped.
 */
let dropping: Promise<void> = Promise.resolve();
const dropFailures: unknown[] = [];

function dropLater(name: string): void {
  dropping = dropping
    .then(() => withAdmin((client) => client.query(`drop database if exists ${name} with (force)`)))
    .then(
      () => undefined,
      (error: unknown) => {
        dropFailures.push(error);
      },
    );
}

after(async () => {
  await dropping;
  if (dropFailures.length > 0) throw dropFailures[0];
});

/** TEST_DATABASE_URL with another database's name. */
function databaseUrl(name: string): string {
  const url = new URL(String(testDatabaseUrl));
  url.pathname = `/${name}`;
  return url.toString();
}

/** The migrations as they are now: a template made by other migrations is not reused. */
const migrationsDigest = createHash('sha256')
  .update(
    Object.entries(migrations)
      .map(([name, { up, down }]) => `${name}\n${up.toString()}\n${down?.toString() ?? ''}`)
      .join('\n'),
  )
  .digest('hex')
  .slice(0, 16);

let sqliteTemplatePath: Promise<string> | undefined;

/** A SQLite file migrated once in this process (its write-ahead log folded in on close), to copy. */
function sqliteTemplate(): Promise<string> {
  sqliteTemplatePath ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pds-template-'));
    const path = join(dir, 'template.sqlite');
    const db = createDatabase({ dialect: 'sqlite', path });
    await migrateToLatest(db, migrations);
    await db.destroy();
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    return path;
  })();
  return sqliteTemplatePath;
}

let postgresTemplateName: Promise<string> | undefined;
/** Templates of other sets of migrations kept when a new one is made (the most recently made). */
const TEMPLATES_KEPT = 3;

/**
 * A PostgreSQL database migrated to the latest migration, that test databases are copied from
 * (`create database ... template`, tens of milliseconds where migrating takes hundreds). One per set of
 * migrations, shared by every test process: the first to need it builds it under an advisory lock, as
 * `<name>_building`, and renames it once migrated, so that a process killed halfway leaves no template that
 * looks whole. Templates of other migrations are dropped as a new one is made, but for the newest few.
 */
function postgresTemplate(): Promise<string> {
  postgresTemplateName ??= withAdmin(async (client) => {
    const name = `pds_template_${migrationsDigest}`;
    await client.query('select pg_advisory_lock(hashtext($1))', ['pds_test_template']);
    try {
      const exists = await client.query('select 1 from pg_database where datname = $1', [name]);
      if (exists.rowCount === 0) {
        // The newest few are kept: another checkout with other migrations (a branch, a second CI run on
        // this server) may be copying from its own template right now.
        const stale = await client.query(
          `select datname from pg_database where datname like 'pds\\_template\\_%' order by oid desc offset ${TEMPLATES_KEPT}`,
        );
        for (const { datname } of stale.rows as { datname: string }[])
          await client.query(`drop database if exists ${datname} with (force)`);
        const building = `${name}_building`;
        await client.query(`create database ${building}`);
        const db = createDatabase({
          dialect: 'postgres',
          url: databaseUrl(building),
          poolSize: 1,
          connectionTimeoutMs: 10_000,
        });
        try {
          await migrateToLatest(db, migrations);
        } finally {
          await db.destroy();
        }
        await client.query(`alter database ${building} rename to ${name}`);
      }
    } finally {
      await client.query('select pg_advisory_unlock(hashtext($1))', ['pds_test_template']);
    }
    return name;
  });
  return postgresTemplateName;
}

async function withAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: testDatabaseUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
