import type { AppModule } from '../../platform/app-module.js';
import type { Executor } from '../../platform/db/transactions.js';
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
  readonly settings: InteractionsSettings;
}

/** Interaction logs from the Discord bot (endpoint 3), their read side and their retention. */
export function createInteractionsModule({
  db,
  fingerprintKey,
  settings,
}: InteractionsModuleDeps): AppModule<InteractionsService> {
  const service = createInteractionsService({ db, fingerprintKey, settings });
  return { name: 'interactions', service, routes: interactionsRoutes(service), close: () => service.close() };
}
