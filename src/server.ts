import closeWithGrace from 'close-with-grace';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { migrations } from './migrations.js';
import { answerByDeadline, waitForDatabase } from './platform/db/availability.js';
import { migrateWithoutBound, pendingMigrations } from './platform/db/migrator.js';
import { StartupError } from './platform/startup-error.js';

export interface StartOptions {
  /** Adds to the app before it listens (the shutdown test uses it for a deliberately slow route). */
  readonly configure?: (app: FastifyInstance) => void | Promise<void>;
}

/**
 * Builds the app, waits for the database (DATABASE_CONNECT_TIMEOUT_SECONDS), migrates it, listens, and
 * shuts down gracefully on SIGTERM/SIGINT: it stops accepting, lets in-flight requests finish within
 * SHUTDOWN_TIMEOUT_MS, closes the database and Redis, and exits 0 (1 if the time runs out or closing
 * fails). A start that fails closes what it opened and throws; a StartupError says what failed in words.
 */
export async function startServer(config: Config, options: StartOptions = {}): Promise<FastifyInstance> {
  const timeoutMs = config.server.databaseConnectTimeoutMs;
  const app = await buildApp({ config });
  try {
    // Reaching the database, its first query through the pool and the migrations check, all within
    // DATABASE_CONNECT_TIMEOUT_SECONDS; applying migrations takes what they take.
    const deadline = Date.now() + timeoutMs;
    await waitForDatabase(app.db, config.database, timeoutMs, app.log);
    await answerByDeadline(
      pendingMigrations(app.db, migrations),
      deadline,
      config.database,
      'read which migrations are pending',
    );
    const applied = await migrateWithoutBound(app.db, config.database, migrations);
    if (applied.length > 0)
      app.log.info({ migrations: applied.map((result) => result.migrationName) }, 'migrated');
    await options.configure?.(app);
    await listen(app, config.server.host, config.server.port);
  } catch (error) {
    await closeAfterFailedStart(app);
    throw error;
  }

  closeWithGrace({ delay: config.server.shutdownTimeoutMs }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'shutting down after an unexpected error');
    else app.log.info({ signal }, 'shutting down');
    await app.close();
  });
  return app;
}

/**
 * How long a failed start waits for the app to close before it gives up on it: a pool connection stuck on
 * a database that never answers would hold the close until the pool's own timeout, or for ever for a query
 * that hangs, and the process is about to exit anyway.
 */
const FAILED_START_CLOSE_MS = 1000;

async function closeAfterFailedStart(app: FastifyInstance): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const closed = app.close().catch((error: unknown) => app.log.error({ err: error }, 'could not close'));
  const gaveUp = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      app.log.warn({ waitedMs: FAILED_START_CLOSE_MS }, 'the app did not close in time after a failed start');
      resolve();
    }, FAILED_START_CLOSE_MS);
    timer.unref();
  });
  await Promise.race([closed, gaveUp]);
  clearTimeout(timer);
}

/** Why the system refused an address, in words. */
const LISTEN_FAILURES: Readonly<Record<string, string>> = {
  EADDRINUSE: 'the address is already in use (another process listens there)',
  EACCES: 'this user may not listen on that port',
  EADDRNOTAVAIL: 'this machine has no such address',
  ENOTFOUND: 'no such host name',
  EAI_AGAIN: 'the host name cannot be resolved now',
};

async function listen(app: FastifyInstance, host: string, port: number): Promise<void> {
  try {
    await app.listen({ host, port });
  } catch (error) {
    const reason = LISTEN_FAILURES[(error as NodeJS.ErrnoException).code ?? ''];
    if (!reason) throw error;
    throw new StartupError(`cannot listen on ${host}:${port}: ${reason} (HOST, PORT)`, { cause: error });
  }
}
