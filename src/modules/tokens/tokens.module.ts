import type { AppModule } from '../../platform/app-module.js';
import { resolveJwtSecret } from '../../platform/auth/jwt-secret.js';
import { createTokenCodec, type TokenCodecSettings } from '../../platform/auth/token-codec.js';
import type { Executor } from '../../platform/db/transactions.js';
import { tokensRoutes } from './tokens.routes.js';
import { createTokensService, type TokensService, type TokensSettings } from './tokens.service.js';

export interface TokensModuleDeps {
  readonly db: Executor;
  readonly settings: TokenCodecSettings &
    TokensSettings & {
      /** Undefined outside production when not set: one is generated and kept in `dataDir`. */
      readonly jwtSecret: string | undefined;
      /** Requests per minute and client address to /auth/refresh. */
      readonly rateLimitPerMinute: number;
    };
  readonly dataDir: string;
}

/** Tokens: issuing, refreshing with rotation, revoking, and authenticating requests (the app's guard). */
export async function createTokensModule({
  db,
  settings,
  dataDir,
}: TokensModuleDeps): Promise<AppModule<TokensService>> {
  const secret = await resolveJwtSecret(settings.jwtSecret, dataDir);
  const service = createTokensService({ db, codec: createTokenCodec(secret, settings), settings });
  return { name: 'tokens', service, routes: tokensRoutes(service, settings.rateLimitPerMinute) };
}
