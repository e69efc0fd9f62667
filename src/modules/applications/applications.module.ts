import type { AppModule } from '../../platform/app-module.js';
import type { Executor } from '../../platform/db/transactions.js';
import type { TokensService } from '../tokens/tokens.service.js';
import { applicationsRoutes } from './applications.routes.js';
import {
  type ApplicationsService,
  type ApplicationsSettings,
  createApplicationsService,
} from './applications.service.js';

export interface ApplicationsModuleDeps {
  readonly db: Executor;
  /** Issues an approved application's credential and revokes it with the application. */
  readonly tokens: Pick<TokensService, 'issue' | 'revoke'>;
  readonly settings: ApplicationsSettings & {
    /** Approvals (which issue tokens) per minute and client address, as for /auth/refresh. */
    readonly rateLimitPerMinute: number;
  };
}

/** Developer applications: endpoint 1, and the review lifecycle behind it. */
export function createApplicationsModule({
  db,
  tokens,
  settings,
}: ApplicationsModuleDeps): AppModule<ApplicationsService> {
  const service = createApplicationsService({ db, tokens, settings });
  return {
    name: 'applications',
    service,
    routes: applicationsRoutes(service, settings.rateLimitPerMinute),
  };
}
