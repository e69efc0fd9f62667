import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, type SqliteDatabase, SqliteDialect, sql } from 'kysely';
import { LRUCache } from 'lru-cache';
import pg from 'pg';

/**
 * The database, typed on no table: each repository sees it through its own tables only
 * (`db.withTables<OwnTables>()`), so the compiler refuses a query on another module's table.
 */
export type Database = Kysely<object>;

export type DatabaseSettings =
  | { readonly dialect: 'sqlite'; readonly path: string }
  | { readonly dialect: 'postgres'; readonly url: string; readonly poolSize: number };

/** How long SQLite waits for another connection's write lock before it gives up. */
const SQLITE_BUSY_TIMEOUT_MS = 5000;
const PG_INT8_OID = 20;

/** Opens the configured database. Nothing connects before this is called; `db.destroy()` closes it. */
export function createDatabase(settings: DatabaseSettings): Database {
  if (settings.dialect === 'sqlite') {
    if (settings.path !== ':memory:') createPrivately(settings.path);
    const connection = new SQLite(settings.path);
    connection.pragma('journal_mode = WAL');
    // FULL makes every acknowledged commit survive a power cut, not only a process crash.
    connection.pragma('synchronous = FULL');
    connection.pragma('foreign_keys = ON');
    connection.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
    return new Kysely<object>({ dialect: new SqliteDialect({ database: withStatementCache(connection) }) });
  }
  const pool = new pg.Pool({
    connectionString: settings.url,
    max: settings.poolSize,
    // BIGINT columns hold epoch milliseconds and counts, all well inside a double's exact range;
    // 64-bit IDs are TEXT and never pass through here.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === PG_INT8_OID ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  return new Kysely<object>({ dialect: new PostgresDialect({ pool }) });
}

/**
 * Creates the database file (and its directory) readable by the service's user only, before SQLite opens
 * it: SQLite gives its WAL and shared-memory files the database file's permissions. An existing file is
 * left as its owner set it.
 */
function createPrivately(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  if (!existsSync(path)) closeSync(openSync(path, 'a', 0o600));
}

/** Prepared statements kept per connection: queries are few and repeat (a token check on every request). */
const SQLITE_STATEMENTS_KEPT = 500;

/**
 * Kysely prepares every query anew; preparing costs more than running a primary-key lookup. better-sqlite3
 * statements are reusable, so keep them by SQL text (the parameters are bound at each run).
 */
function withStatementCache(connection: SQLite.Database): SqliteDatabase {
  const statements = new LRUCache<string, SQLite.Statement>({ max: SQLITE_STATEMENTS_KEPT });
  return {
    close: () => connection.close(),
    prepare(sql: string) {
      let statement = statements.get(sql);
      if (!statement) {
        statement = connection.prepare(sql);
        statements.set(sql, statement);
      }
      return statement;
    },
  };
}

/** Throws when the database does not answer a trivial query. */
export async function pingDatabase(db: Database): Promise<void> {
  await sql`select 1`.execute(db);
}
