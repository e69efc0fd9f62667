import type { Redis } from 'ioredis';
import type { Logger } from '../logger.js';
import { redisOutageLog } from '../redis.js';
import { type Cache, decodeEntry, encodeEntry } from './cache.js';

/** The shared cache: every instance reads what any of them fetched. Keys live under `prefix`. */
export function createRedisCache(redis: Redis, prefix: string, log: Logger): Cache {
  const outage = redisOutageLog(
    log,
    'redis cache unavailable; treating as a miss',
    'redis cache available again',
  );
  return {
    async get(key) {
      const bytes = await outage.attempt(redis.getBuffer(prefix + key), { operation: 'get' });
      return bytes ? decodeEntry(bytes) : undefined;
    },
    async set(key, entry, keepForMs) {
      const ttlMs = Math.max(1, Math.ceil(keepForMs));
      await outage.attempt(redis.set(prefix + key, encodeEntry(entry), 'PX', ttlMs), { operation: 'set' });
    },
  };
}
