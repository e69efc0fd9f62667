import { randomUUID } from 'node:crypto';
import { FAILURE_NOTE_MS, type FetchLocks } from './fetch-locks.js';

/**
 * Fetch locks in this process, with the semantics of the shared ones: for several cached resources that
 * stand for instances sharing one cache (the unit tests), and as the reference the Redis locks follow.
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
      if (live(locks, key)) return undefined;
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
