import { closeSync, existsSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import {
  Kysely,
  PostgresDialect,
  type PostgresPool,
  type PostgresPoolClient,
  type SqliteDatabase,
  SqliteDialect,
  sql,
} from 'kysely';
import { LRUCache } from 'lru-cache';
import pg from 'pg';
import type { Logger } from '../logger.js';
import { createPrivateDirectory } from '../private-directory.js';
import { StartupError } from '../startup-error.js';

/**
 * The database, typed on no table: each repository sees it through its own tables only
 * (`db.withTables<OwnTables>()`), so the compiler refuses a query on another module's table.
 */
export type Database = Kysely<object>;

export type DatabaseSettings =
  | { readonly dialect: 'sqlite'; readonly path: string }
  | {
      readonly dialect: 'postgres';
      readonly url: string;
      readonly poolSize: number;
      /** How long opening one connection may take before the request that needed it fails (503). */
      readonly connectionTimeoutMs: number;
      /**
       * How long one statement may go unanswered before it fails (503) and its connection is dropped: a
       * server gone silent (paused, or a route that drops packets) holds no request for ever. Undefined:
       * no bound (migrations, which take what they take).
       */
      readonly queryTimeoutMs?: number | undefined;
    };

export interface DatabaseOptions {
  /** Told when a connection ends unexpectedly (the pool replaces it by itself); silent when not given. */
  readonly log?: Pick<Logger, 'warn'>;
}

/** How long SQLite waits for another connection's write lock before it gives up. */
const SQLITE_BUSY_TIMEOUT_MS = 5000;
const PG_INT8_OID = 20;
/** The most memory SQLite's page cache may take, in KiB. */
const SQLITE_CACHE_KIB = 32 * 1024;

/** Opens the configured database. Nothing connects before this is called; `db.destroy()` closes it. */
export function createDatabase(settings: DatabaseSettings, options: DatabaseOptions = {}): Database {
  if (settings.dialect === 'sqlite') {
    let connection: SQLite.Database;
    try {
      connection = openSqlite(settings.path);
    } catch (error) {
      throw new StartupError(`cannot open ${describeDatabase(settings)}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    const db = new Kysely<object>({
      dialect: new SqliteDialect({ database: withStatementCache(connection) }),
    });
    sqliteConnections.set(db, connection);
    return db;
  }
  const pool = new pg.Pool({
    connectionString: settings.url,
    max: settings.poolSize,
    connectionTimeoutMillis: settings.connectionTimeoutMs,
    // A peer that vanished without a word (a failover, a dropped route) is found out, not waited on.
    keepAlive: true,
    // BIGINT columns hold epoch milliseconds and counts, all well inside a double's exact range;
    // 64-bit IDs are TEXT and never pass through here.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === PG_INT8_OID ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  survivesConnectionLoss(pool, options.log);
  const bounded =
    settings.queryTimeoutMs === undefined ? pool : answeringWithin(pool, settings.queryTimeoutMs);
  return new Kysely<object>({ dialect: new PostgresDialect({ pool: bounded }) });
}

/** A statement PostgreSQL did not answer within the bound (`queryTimeoutMs`): the database is silent. */
export class DatabaseSilent extends Error {
  constructor(ms: number) {
    super(`the database did not answer within ${ms} ms`);
    this.name = 'DatabaseSilent';
  }
}

/**
 * `pool` with each statement bounded to `ms`. A connection that went unanswered is given back to the pool
 * as broken, which ends it: its statement may still be running (or its transaction open) on a server that
 * comes back, and the next request must not inherit that. Statements asked of it meanwhile (the rollback
 * after a failed statement) fail at once. Closing the connection makes the server roll back what it had.
 */
function answeringWithin(pool: pg.Pool, ms: number): PostgresPool {
  return {
    async connect() {
      const client = await pool.connect();
      let silent: DatabaseSilent | undefined;
      const query = async (text: string, parameters: readonly unknown[]) => {
        if (silent) throw silent;
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            silent = new DatabaseSilent(ms);
            reject(silent);
          }, ms);
        });
        try {
          return await Promise.race([client.query(text, parameters as unknown[]), late]);
        } finally {
          clearTimeout(timer);
        }
      };
      return {
        query: query as unknown as PostgresPoolClient['query'],
        release: () => client.release(silent),
      };
    },
    end: () => pool.end(),
  };
}

/**
 * A connection the server ends (a restart, a failover, `idle_session_timeout`, a pooler) is an `'error'`
 * event: on the pool for an idle connection, on the connection itself while it is lent out. An `'error'`
 * event nobody listens to ends the process, so both are listened to. The pool drops the connection and
 * opens a new one when next asked; the request that was using it fails, and is answered 503.
 */
function survivesConnectionLoss(pool: pg.Pool, log: DatabaseOptions['log']): void {
  // The error alone: the pool hangs the whole client (its connection parameters) on it.
  const lost = (error: Error & { code?: string }) =>
    log?.warn(
      { err: { type: error.name, message: error.message, code: error.code } },
      'database connection lost',
    );
  pool.on('error', lost);
  pool.on('connect', (client) => client.on('error', lost));
}

function openSqlite(path: string): SQLite.Database {
  if (path !== ':memory:') createPrivately(path);
  const connection = new SQLite(path);
  connection.pragma('journal_mode = WAL');
  // FULL makes every acknowledged commit survive a power cut, not only a process crash.
  connection.pragma('synchronous = FULL');
  connection.pragma('foreign_keys = ON');
  // The pages kept in memory (better-sqlite3's build: 16 MB): the indexes a burst of writes touches stay
  // in memory, instead of being read back from the file (through the operating system) for every batch.
  connection.pragma(`cache_size = -${SQLITE_CACHE_KIB}`);
  connection.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
  return connection;
}

/** The database as an operator knows it, without its password: `postgres://user@host:5432/db`, a file path. */
export function describeDatabase(settings: DatabaseSettings): string {
  if (settings.dialect === 'sqlite') return `the SQLite database ${settings.path}`;
  const url = new URL(settings.url);
  url.password = '';
  url.search = '';
  return `the database ${url.toString()}`;
}

/**
 * Creates the database file (and its directory) readable by the service's user only, before SQLite opens
 * it: SQLite gives its WAL and shared-memory files the database file's permissions. An existing file is
 * left as its owner set it.
 */
function createPrivately(path: string): void {
  createPrivateDirectory(dirname(path));
  if (!existsSync(path)) closeSync(openSync(path, 'a', 0o600));
}

/** A statement that does nothing (what a rollback becomes when SQLite has rolled back already). */
const NOTHING = 'select 1 where 0';

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
    prepare(text: string) {
      // Every transaction here writes, so each takes the write lock as it begins (waiting up to the busy
      // timeout for another process's). Kysely begins deferred: a transaction that reads before it writes
      // would then fail at once with SQLITE_BUSY if another process wrote in between.
      let sql = text === 'begin' ? 'begin immediate' : text;
      // SQLite rolls a transaction back by itself on some errors (SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM);
      // Kysely's own rollback then failed with "cannot rollback - no transaction is active", and that error
      // replaced the one that said why: a full disk was logged and answered as a bug. Nothing to roll back.
      if (sql === 'rollback' && !connection.inTransaction) sql = NOTHING;
      let statement = statements.get(sql);
      if (!statement) {
        statement = connection.prepare(sql);
        statements.set(sql, statement);
      }
      return statement;
    },
  };
}

/** The SQLite connection under each SQLite database this module opened. */
const sqliteConnections = new WeakMap<Database, SQLite.Database>();

/**
 * For a SQLite database: a check, cheap enough for every request, of whether another connection (another
 * process: the command line) committed to the file since the check last ran (`PRAGMA data_version`,
 * which this connection's own commits leave alone). Undefined for PostgreSQL, where other instances are
 * the rule and are heard another way.
 */
export function externalWritesProbe(db: Database): (() => boolean) | undefined {
  const connection = sqliteConnections.get(db);
  if (!connection) return undefined;
  const statement = connection.prepare('pragma data_version').pluck();
  let seen = statement.get();
  return () => {
    const now = statement.get();
    if (now === seen) return false;
    seen = now;
    return true;
  };
}

/** Throws when the database does not answer a trivial query. */
export async function pingDatabase(db: Database): Promise<void> {
  await sql`select 1`.execute(db);
}

/**
 * Throws unless the database answers a trivial query within `ms`, on a PostgreSQL connection of its own
 * (outside the pool), ended whatever happens: a server that takes the connection and never answers leaves
 * nothing behind, where a pool's connection would go on trying for the pool's own connect timeout and hold
 * up the pool's close. SQLite has nothing to wait for: `pingDatabase`.
 */
export async function probePostgres(url: string, ms: number): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: ms, query_timeout: ms });
  // A server that drops the connection after it was made is an 'error' event; the query's failure says it.
  client.on('error', () => undefined);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${Math.ceil(ms / 1000)} s`)), ms);
  });
  try {
    await Promise.race([
      (async () => {
        await client.connect();
        await client.query('select 1');
      })(),
      late,
    ]);
  } finally {
    clearTimeout(timer);
    // Not waited for: a connection still being made is destroyed by pg's own connect timeout (`ms`), a
    // query still running by `end` itself; a connection that answered says goodbye.
    client.end().catch(() => undefined);
  }
}
