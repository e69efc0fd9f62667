import type { Config } from '../config.js';
import { TOKEN_REVOCATIONS_CHANNEL } from '../infrastructure.js';
import { createTokensService, type TokensService } from '../modules/tokens/tokens.service.js';
import { resolveJwtSecret } from '../platform/auth/jwt-secret.js';
import { createTokenCodec } from '../platform/auth/token-codec.js';
import { createRedisInvalidationPublisher } from '../platform/cache/invalidation.js';
import type { Database } from '../platform/db/database.js';
import { executorOf } from '../platform/db/transactions.js';
import { createRedis } from '../platform/redis.js';

/**
 * The tokens service as the service builds it, over the command's database. With Redis configured, a
 * revocation is also told to the running instances (which keep token records in process) before the
 * command ends; on SQLite alone they notice the command's write themselves.
 */
export async function withTokens<T>(
  config: Config,
  db: Database,
  work: (tokens: TokensService) => Promise<T>,
): Promise<T> {
  const secret = await resolveJwtSecret(config.auth.jwtSecret, config.dataDir);
  const redis = config.redisUrl
    ? createRedis(config.redisUrl, { connectionName: 'player-data-service:cli' })
    : undefined;
  try {
    await redis?.connect();
    const tokens = createTokensService({
      db: executorOf(db),
      codec: createTokenCodec(secret, config.auth),
      settings: config.auth,
      ...(redis
        ? {
            revocations: createRedisInvalidationPublisher(
              redis,
              config.redisKeyPrefix + TOKEN_REVOCATIONS_CHANNEL,
            ),
          }
        : {}),
    });
    return await work(tokens);
  } finally {
    await redis?.quit().catch(() => redis.disconnect());
  }
}
