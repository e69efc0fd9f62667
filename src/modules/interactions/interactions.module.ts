import type { AppModule } from '../../platform/app-module.js';
import { retentionJobOf } from '../../platform/db/retained-writes.js';
import type { Executor } from '../../platform/db/transactions.js';
import type { Logger } from '../../platform/logger.js';
import { interactionsRoutes } from './interactions.routes.js';
import {
  createInteractionsService,
  type InteractionsService,
  type InteractionsSettings,
} from './interactions.service.js';

export interface InteractionsModuleDeps {
  readonly db: Executor;
  /** The key of the interaction tokens' fingerprints. */
  readonly fingerprintKey: Buffer;
  readonly settings: InteractionsSettings & {
    /** How often the retention job runs (once per period across all instances). */
    readonly retentionJobEveryMs: number;
  };
  readonly log: Logger;
}

/** Interaction logs from the Discord bot (endpoint 3), their read side and their retention. */
export function createInteractionsModule({
  db,
  fingerprintKey,
  settings,
  log,
}: InteractionsModuleDeps): AppModule<InteractionsService> {
  const service = createInteractionsService({ db, fingerprintKey, settings });
  const retention = retentionJobOf({
    name: 'interaction-log-retention',
    everyMs: settings.retentionJobEveryMs,
    db,
    log,
    writes: service,
  });
  return {
    name: 'interactions',
    service,
    routes: interactionsRoutes(service),
    start: retention.start,
    close: retention.close,
  };
}
