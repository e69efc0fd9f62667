import type { Config } from '../../config.js';
import { createTokenCodec } from '../../platform/auth.js';
import type { Database } from '../../platform/db/database.js';
import { resolveJwtSecret } from '../../platform/jwt-secret.js';
import { createTokensRepository } from './tokens.repository.js';
import { createTokensService, type TokensService } from './tokens.service.js';

/** The tokens service over a database, as both the app and the command line use it. */
export async function createTokens(db: Database, config: Config): Promise<TokensService> {
  return createTokensService({
    repository: createTokensRepository(db),
    codec: createTokenCodec(await resolveJwtSecret(config), config.auth),
    settings: config.auth,
  });
}
