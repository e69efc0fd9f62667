import type { AppModule } from '../../platform/app-module.js';
import { retentionJobOf } from '../../platform/db/retained-writes.js';
import type { Executor } from '../../platform/db/transactions.js';
import type { Logger } from '../../platform/logger.js';
import type { PlayersService } from '../players/players.service.js';
import { createPingHistoryReplies } from './ping.reply.js';
import { pingRoutes } from './ping.routes.js';
import { createPingService, type PingService, type PingSettings } from './ping.service.js';

export interface PingModuleDeps {
  readonly db: Executor;
  /** Resolves usernames (through the cache and the upstream budget). */
  readonly players: Pick<PlayersService, 'uuidOf'>;
  readonly settings: PingSettings & {
    /** The most bytes of endpoint 6's answers kept in memory, with their compressed copies. */
    readonly answersMaxBytes: number;
    /** How often the retention job runs (once per period across all instances). */
    readonly retentionJobEveryMs: number;
    /** The largest ingestion body: a thousand samples need more than the default limit. */
    readonly bodyLimitBytes: number;
  };
  readonly log: Logger;
}

/** Ping samples, their per-day aggregates (endpoint 6), and the raw samples' retention. */
export function createPingModule({ db, players, settings, log }: PingModuleDeps): AppModule<PingService> {
  const service = createPingService({ db, players, settings });
  const retention = retentionJobOf({
    name: 'ping-sample-retention',
    everyMs: settings.retentionJobEveryMs,
    db,
    log,
    writes: service,
  });
  return {
    name: 'ping',
    service,
    routes: pingRoutes(service, createPingHistoryReplies(settings.answersMaxBytes), settings.bodyLimitBytes),
    start: retention.start,
    close: retention.close,
  };
}
