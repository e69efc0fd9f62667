import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../logger.js';
import { StartupError } from '../startup-error.js';
import {
  type Database,
  type DatabaseSettings,
  DatabaseSilent,
  describeDatabase,
  pingDatabase,
  probePostgres,
} from './database.js';

/**
 * PostgreSQL's codes for "the server cannot serve this connection now": connection exceptions (class 08),
 * shutdowns (57P01 admin, 57P02 crash, 57P03 cannot connect now) and too many connections (53300).
 */
const PG_UNAVAILABLE_CODE = /^(08...|57P0[123]|53300)$/;
/** The network's errors for a server that is not there. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);
/** SQLite's: another connection holds the write lock past the busy timeout. */
const SQLITE_UNAVAILABLE_CODES = new Set(['SQLITE_BUSY', 'SQLITE_LOCKED']);
/**
 * A database there, answering reads, that cannot write now: its disk full or failing, its file or server
 * read-only (PostgreSQL: 53100 disk full, 53200 out of memory, 58030 I/O error, 25006 a read-only
 * transaction, as on a standby after a failover; SQLite: SQLITE_FULL, SQLITE_IOERR_*, SQLITE_READONLY_*).
 * An outage for its operator to end, answered 503, never a bug's 500.
 */
const CANNOT_WRITE_CODE =
  /^(53100|53200|58030|25006|SQLITE_FULL|SQLITE_IOERR(_\w+)?|SQLITE_READONLY(_\w+)?)$/;
/** node-postgres says these in words only, with no code. */
const PG_CONNECTION_MESSAGES =
  /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Connection terminated due to connection timeout)/;

/**
 * Whether an error says the database cannot be reached or cannot serve right now (an outage to wait out,
 * answered 503), rather than that a statement was wrong (a bug, answered 500).
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error instanceof DatabaseSilent) return true;
  const { code, syscall } = error as { code?: unknown; syscall?: unknown };
  if (typeof code === 'string') {
    if (PG_UNAVAILABLE_CODE.test(code) || SQLITE_UNAVAILABLE_CODES.has(code) || CANNOT_WRITE_CODE.test(code))
      return true;
    // Only a socket's own system error (it names the call: connect, read, getaddrinfo): a client that hangs
    // up mid-body is an ECONNRESET too ("aborted"), and is no outage of ours.
    if (NETWORK_CODES.has(code) && typeof syscall === 'string') return true;
  }
  if (PG_CONNECTION_MESSAGES.test(error.message)) return true;
  return error instanceof AggregateError && error.errors.some(isDatabaseUnavailable);
}

/** A database that is there but busy: every connection of the pool taken past its timeout, or too many. */
const BUSY_CODES = new Set(['53300', 'SQLITE_BUSY', 'SQLITE_LOCKED']);
const BUSY_MESSAGE = /^timeout exceeded when trying to connect/;

/**
 * Whether an error says the database is there but cannot write (a full or failing disk, a read-only file or
 * standby): an outage only its operator ends, so it is logged as an error, where one that comes and goes by
 * itself is a warning.
 */
export function isDatabaseUnwritable(error: unknown): boolean {
  if (error instanceof AggregateError) return error.errors.some(isDatabaseUnwritable);
  const code = (error as { code?: unknown } | null)?.code;
  return error instanceof Error && typeof code === 'string' && CANNOT_WRITE_CODE.test(code);
}

/**
 * Whether an error says the database cannot be reached from here at all (its server down or gone, a
 * connection refused or cut), as opposed to one that is there but busy (the pool's connections all taken
 * past its timeout, the server refusing more connections) or cannot write (a full disk): a busy database
 * still takes other clients' writes, and one that cannot write still answers reads. All are answered 503
 * (`isDatabaseUnavailable`); only this one may be waited out on what was kept.
 */
export function isDatabaseUnreachable(error: unknown): boolean {
  if (error instanceof AggregateError) return error.errors.some(isDatabaseUnreachable);
  if (!(error instanceof Error) || !isDatabaseUnavailable(error)) return false;
  if (isDatabaseUnwritable(error)) return false;
  const { code } = error as { code?: unknown };
  return !(typeof code === 'string' && BUSY_CODES.has(code)) && !BUSY_MESSAGE.test(error.message);
}

/** How long the start waits between two tries of the database. */
const RETRY_INTERVAL_MS = 1000;

/**
 * Waits until the database answers, trying again every second (a log line each time) for at most
 * `timeoutMs`; then fails with a StartupError naming the database and the last reason. Each try is bounded
 * by the time left (at least a second), and on PostgreSQL made on a connection of its own that is ended
 * whatever happens (`probePostgres`): a server that takes connections and never answers is given up on
 * within the time, and leaves no connection attempt behind in the pool to hold up its close.
 */
export async function waitForDatabase(
  db: Database,
  settings: DatabaseSettings,
  timeoutMs: number,
  log: Pick<Logger, 'info' | 'warn'>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  log.info(
    { database: describeDatabase(settings), timeoutSeconds: Math.round(timeoutMs / 1000) },
    'connecting to the database',
  );
  const probe =
    settings.dialect === 'postgres'
      ? (ms: number) => probePostgres(settings.url, ms)
      : (ms: number) => answerWithin(pingDatabase(db), ms);
  for (let attempt = 1; ; attempt++) {
    try {
      await probe(Math.max(deadline - Date.now(), RETRY_INTERVAL_MS));
      return;
    } catch (error) {
      // Tries go on until the deadline (the last one at the deadline itself), so "tried for N s" is true.
      if (Date.now() >= deadline) {
        log.warn({ attempts: attempt, reason: reasonOf(error) }, 'database not reachable; giving up');
        throw new StartupError(
          `cannot reach ${describeDatabase(settings)} (tried for ${Math.round(timeoutMs / 1000)} s): ${reasonOf(error)}`,
          { cause: error },
        );
      }
      // The reason in one line: an unreachable server is an expected wait at start, not a bug with a stack.
      log.warn({ attempt, reason: reasonOf(error) }, 'database not reachable yet; trying again');
      await sleep(Math.min(RETRY_INTERVAL_MS, deadline - Date.now()));
    }
  }
}

/**
 * `work` (a check of the database at start, through the pool), failing with a StartupError that says what
 * (`cannot <what> on the database ...`) when it fails or does not answer by `deadline` (epoch ms; given at
 * least a second from now).
 */
export async function answerByDeadline<T>(
  work: Promise<T>,
  deadline: number,
  settings: DatabaseSettings,
  what: string,
): Promise<T> {
  const ms = Math.max(deadline - Date.now(), RETRY_INTERVAL_MS);
  try {
    return await answerWithin(work, ms);
  } catch (error) {
    throw new StartupError(`cannot ${what} on ${describeDatabase(settings)}: ${reasonOf(error)}`, {
      cause: error,
    });
  }
}

/** `work`'s outcome, or a failure saying it did not come within `ms`. */
async function answerWithin<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${Math.ceil(ms / 1000)} s`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** An error's own words, one line, the best of an AggregateError's (which says nothing itself). */
function reasonOf(error: unknown): string {
  if (error instanceof AggregateError && error.errors[0]) return reasonOf(error.errors[0]);
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] || 'no reason given';
}
