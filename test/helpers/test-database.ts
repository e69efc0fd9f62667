import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { type Dialect, testDatabaseUrl } from './environment.js';

export interface TestDatabase {
  readonly dialect: Dialect;
  /** A DATABASE_URL for the service: its own SQLite file, or its own PostgreSQL schema. */
  readonly url: string;
  drop(): Promise<void>;
}

/** A fresh, empty database for one test: nothing it writes is seen by any other test, even in parallel. */
export async function createTestDatabase(dialect: Dialect): Promise<TestDatabase> {
  if (dialect === 'sqlite') {
    const dir = await mkdtemp(join(tmpdir(), 'pds-test-'));
    return {
      dialect,
      url: `sqlite:${join(dir, 'service.sqlite')}`,
      drop: () => rm(dir, { recursive: true, force: true }),
    };
  }
  if (!testDatabaseUrl) throw new Error('TEST_DATABASE_URL is not set');
  const schema = `test_${randomBytes(8).toString('hex')}`;
  await withAdmin(async (client) => {
    await client.query(`create schema ${schema}`);
  });
  const url = new URL(testDatabaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    dialect,
    url: url.toString(),
    drop: () =>
      withAdmin(async (client) => {
        await client.query(`drop schema if exists ${schema} cascade`);
      }),
  };
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
