import type { AppModule } from '../../platform/app-module.js';
import type { SessionAuthenticator } from '../../platform/auth/session.js';
import { periodicJobOf } from '../../platform/db/periodic-job.js';
import type { Executor } from '../../platform/db/transactions.js';
import type { Logger } from '../../platform/logger.js';
import { createDiscordClient, type DiscordSettings } from '../../upstream/discord.js';
import type { TokensService } from '../tokens/tokens.service.js';
import { portalOff, portalRoutes } from './portal.routes.js';
import { createSessionsService, type SessionsService, type SessionsSettings } from './sessions.service.js';
import { type SignInSettings, signInRoutes } from './sign-in.routes.js';

export interface PortalModuleDeps {
  readonly db: Executor;
  /** The key sign-ins' PKCE verifiers are derived with (from the signing secret: `deriveKey`). */
  readonly verifierKey: Buffer;
  readonly tokens: Pick<TokensService, 'issue' | 'revokeKey'>;
  readonly settings: SessionsSettings &
    SignInSettings & {
      /** Discord's OAuth2 application; undefined: sign-in, sessions and the portal are off (404). */
      readonly discord: DiscordSettings | undefined;
      /** How often expired sign-ins and sessions are deleted. */
      readonly retentionJobEveryMs: number;
    };
  readonly log: Logger;
}

export interface PortalModule extends AppModule<SessionsService | undefined> {
  /** How the route guards read a session cookie; undefined while sign-in is off. */
  readonly sessions: SessionAuthenticator | undefined;
}

/**
 * The developer portal: signing in with Discord, the sessions it starts, and the portal's pages (which
 * use the applications' and keys' routes with the session). Off, and every route of it a 404, unless
 * Discord sign-in is configured.
 */
export function createPortalModule({
  db,
  verifierKey,
  tokens,
  settings,
  log,
}: PortalModuleDeps): PortalModule {
  if (!settings.discord)
    return { name: 'portal', service: undefined, sessions: undefined, routes: portalOff };
  const service = createSessionsService({
    db,
    verifierKey,
    discord: createDiscordClient(settings.discord, log),
    tokens,
    settings,
  });
  const purge = periodicJobOf({
    name: 'portal-sessions-purge',
    everyMs: settings.retentionJobEveryMs,
    db,
    log,
    run: () => service.purge(),
  });
  return {
    name: 'portal',
    service,
    sessions: service,
    routes: async (app) => {
      await app.register(signInRoutes(service, settings));
      await app.register(portalRoutes);
    },
    start: () => purge.start(),
    close: () => purge.close(),
  };
}
