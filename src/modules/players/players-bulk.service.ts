import { UpstreamFailure } from '../../upstream/upstream-failure.js';
import type { PlayerLookup, PlayersService } from './players.service.js';

/**
 * Bulk reads (`POST /players`): many players in one call, each looked up exactly as a single read looks it
 * up (the one cache, single-flight and upstream budget, charged to the caller's share of the key), so that
 * each item is what `GET /player/{player}` would answer for it.
 */

/** The most players one bulk read names. */
export const BULK_MAX_PLAYERS = 100;
/**
 * The most upstream calls (Mojang or Hypixel) one bulk read has in flight at once: its cache hits never
 * wait, its misses go out this many at a time, so that one call cannot open a hundred connections at once.
 */
export const BULK_UPSTREAM_CONCURRENCY = 8;

/** One player of a bulk read: what a single read found, or the upstream failure it would have answered. */
export type BulkItem = PlayerLookup | { readonly kind: 'failed'; readonly failure: UpstreamFailure };

export interface PlayersBulkService {
  /**
   * The players `given` names (UUIDs, dashed or not, or usernames; already valid), each distinct string
   * once, in the order first given. An upstream failure with no copy to stand in is that item's; any
   * other error (the database unavailable) fails the whole read, as it fails a single one.
   */
  lookupMany(given: readonly string[], owner: bigint): Promise<ReadonlyMap<string, BulkItem>>;
}

/** Each distinct string once, in the order first given: the keys of the answer. */
export const distinctPlayers = (given: readonly string[]): string[] => [...new Set(given)];

/** Runs calls at most `count` at a time, the others waiting in the order they came. */
function slots(count: number) {
  let free = count;
  const waiting: (() => void)[] = [];
  return async <T>(call: () => Promise<T>): Promise<T> => {
    if (free > 0) free -= 1;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await call();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else free += 1;
    }
  };
}

export function createPlayersBulkService(
  players: Pick<PlayersService, 'lookup'>,
  upstreamConcurrency = BULK_UPSTREAM_CONCURRENCY,
): PlayersBulkService {
  return {
    async lookupMany(given, owner) {
      const keys = distinctPlayers(given);
      const options = { upstream: slots(upstreamConcurrency) };
      const items = await Promise.all(
        keys.map((player) =>
          players.lookup(player, owner, options).then(
            (found): BulkItem => found,
            (error: unknown): BulkItem => {
              if (error instanceof UpstreamFailure) return { kind: 'failed', failure: error };
              throw error;
            },
          ),
        ),
      );
      return new Map(keys.map((key, index) => [key, items[index] as BulkItem]));
    },
  };
}
