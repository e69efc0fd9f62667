import { Redis } from 'ioredis';

/** How long a Redis command may take before the caller treats Redis as unavailable. */
const REDIS_COMMAND_TIMEOUT_MS = 1000;

/**
 * A Redis connection that fails fast instead of queueing while Redis is away: the callers (cache, limits,
 * readiness) each know a better fallback than waiting. It reconnects by itself.
 */
export function createRedis(url: string, connectionName?: string): Redis {
  return new Redis(url, {
    // Shown by CLIENT LIST, so an operator can tell this service's connections (and deployments) apart.
    ...(connectionName ? { connectionName } : {}),
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
  });
}

export async function pingRedis(redis: Redis): Promise<void> {
  const answer = await redis.ping();
  if (answer !== 'PONG') throw new Error(`Redis answered PING with ${answer}`);
}
