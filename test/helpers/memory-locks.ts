import { randomUUID } from 'node:crypto';
import { FAILURE_NOTE_MS, type FetchLocks } from '../../src/platform/cache/fetch-locks.js';

/**
 * Fetch locks in this process, with the semantics of the Redis ones (src/platform/cache/redis-locks.ts):
 * for several cached resources that stand for instances sharing one cache, on the test's clock.
 */
export function createMemoryLocks(now: () => number = Date.now): FetchLocks {
  const locks = new Map<string, { token: string; until: number }>();
  const notes = new Map<string, { failure: Buffer; until: number }>();
  const live = <T extends { until: number }>(map: Map<string, T>, key: string): T | undefined => {
    const value = map.get(key);
    if (value && value.until > now()) return value;
    map.delete(key);
    return undefined;
  };
  return {
    async acquire(key, ttlMs) {
      const held = live(locks, key);
      if (held) return { heldBy: held.token };
      const token = randomUUID();
      locks.set(key, { token, until: now() + ttlMs });
      return {
        token,
        async release(failure) {
          if (failure) notes.set(`${key}\n${token}`, { failure, until: now() + FAILURE_NOTE_MS });
          if (locks.get(key)?.token === token) locks.delete(key);
        },
      };
    },
    async holder(key) {
      return live(locks, key)?.token;
    },
    async failureOf(key, token) {
      return live(notes, `${key}\n${token}`)?.failure;
    },
  };
}
