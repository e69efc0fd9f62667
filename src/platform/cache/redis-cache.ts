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
  /** The command's answer, or undefined (a miss) when Redis fails it. */
  const attempt = <T>(operation: string, command: Promise<T>): Promise<T | undefined> =>
    command.then(
      (answer) => {
        outage.answered();
        return answer;
      },
      (error: unknown) => {
        outage.failed(error, { operation });
        return undefined;
      },
    );
  return {
    async get(key) {
      const bytes = await attempt('get', redis.getBuffer(prefix + key));
      return bytes ? decodeEntry(bytes) : undefined;
    },
    async set(key, entry, keepForMs) {
      await attempt(
        'set',
        redis.set(prefix + key, encodeEntry(entry), 'PX', Math.max(1, Math.ceil(keepForMs))),
      );
    },
  };
}
