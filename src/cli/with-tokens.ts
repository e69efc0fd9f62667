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
 * command ends; without it (or while Redis does not answer: the command goes on, and says so on `warn`)
 * they hear of the command's write from the database itself, within a second on PostgreSQL (its change
 * mark), at their next request on SQLite. An operator's revocation must not wait for Redis.
 */
export async function withTokens<T>(
  config: Config,
  db: Database,
  work: (tokens: TokensService) => Promise<T>,
  warn: (text: string) => void,
): Promise<T> {
  const secret = await resolveJwtSecret(config.auth.jwtSecret, config.dataDir);
  let redis = config.redisUrl
    ? createRedis(config.redisUrl, { connectionName: 'player-data-service:cli' })
    : undefined;
  const unheard = (error: unknown) =>
    warn(
      `warning: Redis did not take the change (${(error as Error).message}); running instances hear of it from the database within a second\n`,
    );
  // Told once, where it is used: an error event nobody listens to is printed with its stack.
  redis?.on('error', () => undefined);
  try {
    await redis?.connect().catch((error: unknown) => {
      unheard(error);
      redis?.disconnect();
      redis = undefined;
    });
    const tokens = createTokensService({
      db: executorOf(db),
      codec: createTokenCodec(secret, config.auth),
      settings: config.auth,
      ...(redis
        ? {
            revocations: createRedisInvalidationPublisher(
              redis,
              config.redisKeyPrefix + TOKEN_REVOCATIONS_CHANNEL,
              unheard,
            ),
          }
        : {}),
    });
    return await work(tokens);
  } finally {
    await redis?.quit().catch(() => redis?.disconnect());
  }
}
