import type { AppModule } from '../../platform/app-module.js';
import { createTokenCodec, type TokenCodecSettings } from '../../platform/auth/token-codec.js';
import type { InvalidationFeed } from '../../platform/cache/invalidation.js';
import type { Executor } from '../../platform/db/transactions.js';
import type { Logger } from '../../platform/logger.js';
import { type Standings, tokensRoutes } from './tokens.routes.js';
import {
  createTokensService,
  TOKEN_CHANGES_CHECK_MS,
  type TokensService,
  type TokensSettings,
} from './tokens.service.js';

export interface TokensModuleDeps {
  readonly db: Executor;
  readonly settings: TokenCodecSettings &
    TokensSettings & {
      /** Requests per minute and client address to /auth/refresh. */
      readonly rateLimitPerMinute: number;
    };
  /** The signing secret, resolved (`resolveJwtSecret`, platform/auth/jwt-secret.ts). */
  readonly secret: string;
  /** How revoked tokens reach every instance (token records are kept in process only with one). */
  readonly revocations?: InvalidationFeed;
  /** Where owners stand in their limits (work budget, upstream share), for `GET /auth/me`. */
  readonly standings: Standings;
  /** Where a failed read of the change mark is told. */
  readonly log?: Pick<Logger, 'warn'>;
  /** Where a token comes from: said by the 401s of `POST /auth/refresh`. */
  readonly wayIn?: string;
}

/** Tokens: issuing, refreshing with rotation, revoking, and authenticating requests (the app's guard). */
export function createTokensModule({
  db,
  settings,
  secret,
  revocations,
  standings,
  log,
  wayIn,
}: TokensModuleDeps): AppModule<TokensService> {
  const codec = createTokenCodec(secret, settings);
  const service = createTokensService({
    db,
    codec,
    settings,
    ...(revocations ? { revocations } : {}),
  });
  let checks: NodeJS.Timeout | undefined;
  const check = () =>
    service
      .checkForChanges()
      .catch((error: unknown) => log?.warn({ err: error }, 'could not read the token change mark'));
  return {
    name: 'tokens',
    service,
    routes: tokensRoutes(service, settings.rateLimitPerMinute, standings, wayIn),
    async start() {
      if (!revocations) return;
      // Records are kept only once the mark has been read: the first read is part of starting.
      await check();
      checks = setInterval(check, TOKEN_CHANGES_CHECK_MS);
      checks.unref();
    },
    async close() {
      clearInterval(checks);
    },
  };
}
