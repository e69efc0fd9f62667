import { LRUCache } from 'lru-cache';
import type { Cache, CacheEntry } from './cache.js';

/** Bookkeeping bytes per entry beyond its value and key, so that many tiny entries still count. */
const ENTRY_OVERHEAD_BYTES = 128;

/** The in-process cache: least recently used entries go first once the values pass `maxBytes`. */
export function createMemoryCache(maxBytes: number): Cache {
  const lru = new LRUCache<string, CacheEntry>({
    maxSize: maxBytes,
    sizeCalculation: (entry, key) => entry.bytes.length + key.length + ENTRY_OVERHEAD_BYTES,
    ttlAutopurge: false,
  });
  return {
    async get(key) {
      return lru.get(key);
    },
    async set(key, entry, keepForMs) {
      lru.set(key, entry, { ttl: Math.max(1, keepForMs) });
    },
  };
}
