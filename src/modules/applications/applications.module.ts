import type { AppModule } from '../../platform/app-module.js';
import type { Executor } from '../../platform/db/transactions.js';
import type { TokensService } from '../tokens/tokens.service.js';
import { applicationKeysRoutes } from './application-keys.routes.js';
import { type ApplicationKeysService, createApplicationKeysService } from './application-keys.service.js';
import { applicationsRoutes } from './applications.routes.js';
import {
  type ApplicationsService,
  type ApplicationsSettings,
  createApplicationsService,
} from './applications.service.js';

export interface ApplicationsModuleDeps {
  readonly db: Executor;
  /** Issues tokens for application keys, and revokes them with their key or application. */
  readonly tokens: Pick<TokensService, 'issue' | 'revoke' | 'revokeKey'>;
  readonly settings: ApplicationsSettings & {
    /** Requests per minute and client address to the routes that hand out a key or a token. */
    readonly rateLimitPerMinute: number;
  };
  /** Where a token comes from: said by the 401s of `POST /auth/token`. */
  readonly wayIn?: string;
}

export interface ApplicationsModuleService extends ApplicationsService {
  readonly keys: ApplicationKeysService;
}

/** Developer applications: endpoint 1, the review lifecycle behind it, and approved applications' keys. */
export function createApplicationsModule({
  db,
  tokens,
  settings,
  wayIn,
}: ApplicationsModuleDeps): AppModule<ApplicationsModuleService> {
  const applications = createApplicationsService({ db, tokens, settings });
  const keys = createApplicationKeysService({ db, tokens });
  return {
    name: 'applications',
    service: { ...applications, keys },
    routes: async (app) => {
      await app.register(applicationsRoutes(applications));
      await app.register(applicationKeysRoutes(keys, settings.rateLimitPerMinute, wayIn));
    },
  };
}
