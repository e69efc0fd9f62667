import { LRUCache } from 'lru-cache';
import { type Cache, type CacheEntry, ownBytes } from './cache.js';

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
      // Counted by its length, so held by its length: never as a view into a larger buffer.
      const bytes = ownBytes(entry.bytes);
      lru.set(key, bytes === entry.bytes ? entry : { ...entry, bytes }, { ttl: Math.max(1, keepForMs) });
    },
  };
}
