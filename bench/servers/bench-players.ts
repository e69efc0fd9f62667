/**
 * The distinct players a bench fills the cache with: the `index`-th UUID under `prefix` (hex digits), its
 * index in hex padded to 32 digits in all. bench/random-players.lua makes the same UUIDs, to hit them.
 */
export function benchPlayerUuid(prefix: string, index: number): string {
  return `${prefix}${index.toString(16).padStart(32 - prefix.length, '0')}`;
}

/** The prefix of the players the service seeds (BENCH_CACHE_SEED_PLAYERS). */
export const SEED_PREFIX = 'cafe';
