import closeWithGrace from 'close-with-grace';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { migrations } from './migrations.js';
import { migrateToLatest } from './platform/db/migrator.js';

export interface StartOptions {
  /** Adds to the app before it listens (the shutdown test uses it for a deliberately slow route). */
  readonly configure?: (app: FastifyInstance) => void | Promise<void>;
}

/**
 * Builds the app, migrates the database, listens, and shuts down gracefully on SIGTERM/SIGINT: it stops
 * accepting, lets in-flight requests finish within SHUTDOWN_TIMEOUT_MS, closes the database and Redis,
 * and exits 0 (1 if the time runs out or closing fails).
 */
export async function startServer(config: Config, options: StartOptions = {}): Promise<FastifyInstance> {
  const app = await buildApp({ config });
  const applied = await migrateToLatest(app.db, migrations);
  if (applied.length > 0)
    app.log.info({ migrations: applied.map((result) => result.migrationName) }, 'migrated');
  await options.configure?.(app);

  closeWithGrace({ delay: config.server.shutdownTimeoutMs }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'shutting down after an unexpected error');
    else app.log.info({ signal }, 'shutting down');
    await app.close();
  });

  await app.listen({ host: config.server.host, port: config.server.port });
  return app;
}
