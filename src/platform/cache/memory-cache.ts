import { LRUCache } from 'lru-cache';
import { type Cache, type CacheEntry, ownBytes } from './cache.js';

/**
 * What an entry holds beyond its value's bytes and its key's characters: the entry and its Buffer and
 * ArrayBuffer objects, the key's string, lru-cache's slots. Measured (test/platform/cache/memory-bound.test.ts):
 * 8 MiB of 100-byte values counted with 128 here held 20 MiB of heap and buffers; an entry takes about 600.
 */
export const ENTRY_OVERHEAD_BYTES = 640;

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
