import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from '../logger.js';
import { redisOutageLog } from '../redis.js';
import { FAILURE_NOTE_MS, type FetchLease, type FetchLocks } from './fetch-locks.js';

/** Takes the lock if it is free (answering our token), or answers the current holder's token. */
const ACQUIRE = `
local current = redis.call('GET', KEYS[1])
if current then return current end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return ARGV[1]`;

/** Leaves the failure note (if any), then deletes the lock only if this holder still has it. */
const RELEASE = `
if ARGV[2] ~= '' then redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3]) end
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

/** Fetch locks shared by every instance using this Redis: a key with a token per holder and a lifetime. */
export function createRedisLocks(redis: Redis, prefix: string, log: Logger): FetchLocks {
  const lockKey = (key: string) => `${prefix}lock:${key}`;
  const noteKey = (key: string, token: string) => `${prefix}failed:${key}:${token}`;
  const outage = redisOutageLog(
    log,
    'redis locks unavailable; fetching without the shared lock',
    'redis locks available again',
  );
  const attempt = <T>(operation: string, command: Promise<T>) => outage.attempt(command, { operation });
  const noLock = (token: string): FetchLease => ({ token, release: async () => undefined });

  return {
    async acquire(key, ttlMs) {
      const token = randomUUID();
      const answer = await attempt(
        'acquire',
        redis.eval(ACQUIRE, 1, lockKey(key), token, Math.max(1, Math.ceil(ttlMs))),
      );
      if (typeof answer !== 'string') return noLock(token);
      if (answer !== token) return { heldBy: answer };
      return {
        token,
        async release(failure) {
          await attempt(
            'release',
            redis.eval(RELEASE, 2, lockKey(key), noteKey(key, token), token, failure ?? '', FAILURE_NOTE_MS),
          );
        },
      };
    },
    async holder(key) {
      return (await attempt('holder', redis.get(lockKey(key)))) ?? undefined;
    },
    async failureOf(key, token) {
      return (await attempt('failureOf', redis.getBuffer(noteKey(key, token)))) ?? undefined;
    },
  };
}
