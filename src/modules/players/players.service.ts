import type { CacheEntry } from '../../platform/cache/cache.js';
import type { CachedResource, Freshness } from '../../platform/cache/cached-resource.js';
import { type Executor, inTransaction } from '../../platform/db/transactions.js';
import { AppError, ErrorKinds } from '../../platform/errors.js';
import type { Logger } from '../../platform/logger.js';
import { parsePlayerRef } from '../../platform/player-id.js';
import type { HypixelClient, HypixelPlayer } from '../../upstream/hypixel.js';
import type { MojangClient } from '../../upstream/mojang.js';
import { encodePlayer, PlayerSnapshot } from './player-snapshot.js';
import { createPlayersRepository } from './players.repository.js';

/** Who a `{player}` names: a UUID, or nobody (no Minecraft player has this username), as of `unknown`. */
export type Resolution = { readonly uuid: string } | { readonly unknown: Freshness };

/** What the service knows of a player: found, a UUID that never joined Hypixel, or an unknown username. */
export type PlayerLookup =
  | { readonly kind: 'found'; readonly player: PlayerSnapshot }
  | { readonly kind: 'never_joined'; readonly uuid: string; readonly freshness: Freshness }
  | { readonly kind: 'unknown_name'; readonly freshness: Freshness };

/**
 * Players, for routes and for other modules alike: every lookup goes through the one cache, single-flight
 * and upstream budget. Upstream trouble with no copy to stand in throws an UpstreamFailure.
 */
export interface PlayersService {
  /** Turns a UUID (dashed or not, any case) or a username into an undashed lowercase UUID. */
  resolve(player: string): Promise<Resolution>;
  /** The player a UUID or username names: from the cache while fresh, otherwise from Hypixel. */
  lookup(player: string): Promise<PlayerLookup>;
}

export interface PlayersServiceDeps {
  readonly db: Executor;
  readonly hypixel: Pick<HypixelClient, 'player'>;
  readonly mojang: MojangClient;
  /** Cached resources: `player` (UUID -> player, or empty: never joined), `username` (name -> UUID, or empty). */
  readonly players: CachedResource;
  readonly usernames: CachedResource;
  readonly log: Logger;
  readonly now?: () => number;
}

export function createPlayersService(deps: PlayersServiceDeps): PlayersService {
  const { db, hypixel, mojang, log } = deps;
  const now = deps.now ?? Date.now;
  const repository = createPlayersRepository(db);

  /** One successful fetch: the player, the name it goes by now, and its latest copy, together or not at all. */
  async function record(uuid: string, player: HypixelPlayer, at: number): Promise<void> {
    await inTransaction(db, async (transaction) => {
      const players = createPlayersRepository(transaction);
      await players.countFetch(uuid, player.displayName, at);
      if (player.displayName) await players.sawName(uuid, player.displayName, at);
      await players.keepLatestCopy(uuid, player.json, at);
    });
  }

  async function fetchPlayer(uuid: string): Promise<Buffer> {
    const player = await hypixel.player(uuid);
    if (!player) return Buffer.alloc(0);
    // The answer is good even if recording it fails: serve it, and say so in the log.
    await record(uuid, player, now()).catch((error: unknown) =>
      log.error({ err: error, uuid }, 'could not record a player fetch'),
    );
    return encodePlayer(player.json);
  }

  async function lastKnownPlayer(uuid: string): Promise<CacheEntry | undefined> {
    const known = await repository.lastKnown(uuid);
    return known && { bytes: encodePlayer(known.json), storedAt: known.fetchedAt };
  }

  async function lookupName(name: string): Promise<Buffer> {
    const profile = await mojang.lookup(name);
    return profile ? Buffer.from(profile.id) : Buffer.alloc(0);
  }

  /** Mojang unreachable: a name this service has seen still resolves. */
  async function lastKnownName(name: string): Promise<CacheEntry | undefined> {
    const known = await repository.findByName(name);
    return known && { bytes: Buffer.from(known.uuid), storedAt: known.lastSeenAt };
  }

  const service: PlayersService = {
    async resolve(player) {
      const ref = parsePlayerRef(player);
      if (!ref) {
        throw AppError.of(ErrorKinds.INVALID_FIELD, {
          reason: 'player must be a Minecraft UUID or a username',
          developerReason: `"${player.slice(0, 40)}" is neither a Minecraft UUID nor a username`,
        });
      }
      if ('uuid' in ref) return ref;
      const { username } = ref;
      const served = await deps.usernames.get(
        username.toLowerCase(),
        () => lookupName(username),
        () => lastKnownName(username),
      );
      return served.bytes.length > 0
        ? { uuid: served.bytes.toString('utf8') }
        : { unknown: served.freshness };
    },

    async lookup(player) {
      const resolved = await service.resolve(player);
      if ('unknown' in resolved) return { kind: 'unknown_name', freshness: resolved.unknown };
      const { uuid } = resolved;
      const served = await deps.players.get(
        uuid,
        () => fetchPlayer(uuid),
        () => lastKnownPlayer(uuid),
      );
      if (served.bytes.length === 0) return { kind: 'never_joined', uuid, freshness: served.freshness };
      return { kind: 'found', player: new PlayerSnapshot(uuid, served.bytes, served.freshness) };
    },
  };
  return service;
}
