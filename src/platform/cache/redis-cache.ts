import type { Redis } from 'ioredis';
import type { Logger } from '../logger.js';
import { type Cache, decodeEntry, encodeEntry } from './cache.js';

/** The shared cache: every instance reads what any of them fetched. Keys live under `prefix`. */
export function createRedisCache(redis: Redis, prefix: string, log: Logger): Cache {
  const failed = (operation: string) => (error: unknown) => {
    log.warn({ err: error, operation }, 'redis cache unavailable; treating as a miss');
    return undefined;
  };
  return {
    async get(key) {
      const bytes = await redis.getBuffer(prefix + key).catch(failed('get'));
      return bytes ? decodeEntry(bytes) : undefined;
    },
    async set(key, entry, keepForMs) {
      await redis
        .set(prefix + key, encodeEntry(entry), 'PX', Math.max(1, Math.ceil(keepForMs)))
        .catch(failed('set'));
    },
  };
}
