import closeWithGrace from 'close-with-grace';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { migrations } from './migrations.js';
import { waitForDatabase } from './platform/db/availability.js';
import { migrateToLatest } from './platform/db/migrator.js';
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
  const app = await buildApp({ config });
  try {
    await waitForDatabase(app.db, config.database, config.server.databaseConnectTimeoutMs, app.log);
    const applied = await migrateToLatest(app.db, migrations);
    if (applied.length > 0)
      app.log.info({ migrations: applied.map((result) => result.migrationName) }, 'migrated');
    await options.configure?.(app);
    await listen(app, config.server.host, config.server.port);
  } catch (error) {
    await app.close();
    throw error;
  }

  closeWithGrace({ delay: config.server.shutdownTimeoutMs }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'shutting down after an unexpected error');
    else app.log.info({ signal }, 'shutting down');
    await app.close();
  });
  return app;
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
