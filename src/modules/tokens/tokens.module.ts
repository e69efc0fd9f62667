import type { AppModule } from '../../platform/app-module.js';
import { createTokenCodec, type TokenCodecSettings } from '../../platform/auth/token-codec.js';
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
}

/** Tokens: issuing, refreshing with rotation, revoking, and authenticating requests (the app's guard). */
export function createTokensModule({ db, settings, secret }: TokensModuleDeps): AppModule<TokensService> {
  const service = createTokensService({ db, codec: createTokenCodec(secret, settings), settings });
  return { name: 'tokens', service, routes: tokensRoutes(service, settings.rateLimitPerMinute) };
}
