import type { AppModule } from '../../platform/app-module.js';
import { createTokenCodec, type TokenCodecSettings } from '../../platform/auth/token-codec.js';
import type { InvalidationFeed } from '../../platform/cache/invalidation.js';
import type { Executor } from '../../platform/db/transactions.js';
import { tokensRoutes } from './tokens.routes.js';
import { createTokensService, type TokensService, type TokensSettings } from './tokens.service.js';

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
}

/** Tokens: issuing, refreshing with rotation, revoking, and authenticating requests (the app's guard). */
export function createTokensModule({
  db,
  settings,
  secret,
  revocations,
}: TokensModuleDeps): AppModule<TokensService> {
  const codec = createTokenCodec(secret, settings);
  const service = createTokensService({ db, codec, settings, ...(revocations ? { revocations } : {}) });
  return { name: 'tokens', service, routes: tokensRoutes(service, settings.rateLimitPerMinute) };
}
