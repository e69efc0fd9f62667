import type { AppModule } from '../../platform/app-module.js';
import { periodicJobOf } from '../../platform/db/periodic-job.js';
import type { Executor } from '../../platform/db/transactions.js';
import type { UsageMeter } from '../../platform/limits/usage-meter.js';
import type { Logger } from '../../platform/logger.js';
import {
  createOwnerUsageService,
  type OwnerUsageService,
  type OwnerUsageSettings,
} from './owner-usage.service.js';

/** How often an instance stores what it counted: the most a crash can lose, and how late the portal is. */
export const USAGE_FLUSH_MS = 5000;

export interface OwnerUsageModuleDeps {
  readonly db: Executor;
  readonly meter: UsageMeter;
  readonly settings: OwnerUsageSettings & { readonly retentionJobEveryMs: number };
  readonly log: Logger;
}

/**
 * Each owner's usage per day (requests, upstream lookups, 429s), counted in process by the app and the
 * upstream clients (platform/limits/usage-meter.ts) and added to the database every few seconds by each
 * instance. No routes: `GET /auth/me` and the developer portal show it.
 */
export function createOwnerUsageModule({
  db,
  meter,
  settings,
  log,
}: OwnerUsageModuleDeps): AppModule<OwnerUsageService> {
  const service = createOwnerUsageService({ db, meter, settings });
  let flushes: NodeJS.Timeout | undefined;
  const purge = periodicJobOf({
    name: 'owner-usage-purge',
    everyMs: settings.retentionJobEveryMs,
    db,
    log,
    run: () => service.purge(),
  });
  let busy = false;
  const flush = () =>
    service
      .flush()
      .catch((error: unknown) =>
        log.warn({ err: error }, 'could not store owners’ usage; kept for the next try'),
      );
  return {
    name: 'owner-usage',
    service,
    start() {
      // A tick while a flush is still under way (a slow database) is skipped: the next takes its counts.
      flushes = setInterval(() => {
        if (busy) return;
        busy = true;
        void flush().finally(() => {
          busy = false;
        });
      }, USAGE_FLUSH_MS);
      flushes.unref();
      purge.start();
    },
    async close() {
      clearInterval(flushes);
      await purge.close();
      // After any flush under way: the last counts are written before the database closes.
      await flush();
    },
  };
}
