import type { CacheEntry } from '../../platform/cache/cache.js';
import type { CachedResource, Freshness } from '../../platform/cache/cached-resource.js';
import type { ContentEncoding } from '../../platform/compression.js';
import { type Executor, inTransaction } from '../../platform/db/transactions.js';
import { AppError, ErrorKinds } from '../../platform/errors.js';
import { jsonEnvelope, parseJsonExact } from '../../platform/json.js';
import type { Logger } from '../../platform/logger.js';
import { parsePlayerRef } from '../../platform/player-id.js';
import type { HypixelClient, HypixelPlayer } from '../../upstream/hypixel.js';
import type { MojangClient } from '../../upstream/mojang.js';
import type { PlayerHistoryService } from './player-history.service.js';
import { createPlayersRepository } from './players.repository.js';

/**
 * A found player is kept in the cache as the bytes of its PlayerResult body, so that a cache hit is sent
 * as it is: no parse, no serialization, no copy (docs/decisions.md). The player object is a view into it.
 */
const playerResult = jsonEnvelope('{"success":true,"throttle":false,"player":');

/**
 * A player as the service knows it: Hypixel's player object, where the copy came from, and how old it is.
 * Its bytes are the cache's own: read them, never write to them.
 */
export class PlayerSnapshot {
  #data: Record<string, unknown> | undefined;

  constructor(
    /** Undashed lowercase. */
    readonly uuid: string,
    /** The PlayerResult body `{"success":true,"throttle":false,"player":{...}}`, as kept in the cache. */
    readonly body: Buffer,
    readonly freshness: Freshness,
    /** The body compressed in an encoding, kept beside it once made. */
    readonly encoded: (encoding: ContentEncoding) => Promise<Buffer>,
  ) {}

  /** The player object exactly as Hypixel sent it (JSON text bytes): a view into `body`. */
  get json(): Buffer {
    return playerResult.inner(this.body);
  }

  /** The player object, parsed on first use (integers beyond 2^53 keep their digits, as strings). */
  data(): Readonly<Record<string, unknown>> {
    this.#data ??= parseJsonExact(this.json.toString('utf8')) as Record<string, unknown>;
    return this.#data;
  }

  /** The name the player goes by on Hypixel. */
  displayName(): string | undefined {
    const name = this.data().displayname;
    return typeof name === 'string' ? name : undefined;
  }

  /** The Discord account the player linked on their Hypixel profile (`socialMedia.links.DISCORD`). */
  discordLink(): string | undefined {
    const link = field(field(field(this.data(), 'socialMedia'), 'links'), 'DISCORD');
    return typeof link === 'string' ? link : undefined;
  }
}

const field = (value: unknown, name: string): unknown =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)[name]
    : undefined;

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
  /**
   * Turns a UUID (dashed or not, any case) or a username into an undashed lowercase UUID. `owner`, here
   * and in `lookup`, is whose lookup it is: an upstream call it costs is charged to their share of the key
   * (none: the service's own lookup).
   */
  resolve(player: string, owner?: bigint, options?: LookupOptions): Promise<Resolution>;
  /**
   * The undashed lowercase UUID `player` names, resolved as `resolve` does; 404 PLAYER_NOT_FOUND when no
   * Minecraft player has the username. For the modules that need a player to go on (ping, linking).
   */
  uuidOf(player: string, owner?: bigint): Promise<string>;
  /** The player a UUID or username names: from the cache while fresh, otherwise from Hypixel. */
  lookup(player: string, owner?: bigint, options?: LookupOptions): Promise<PlayerLookup>;
}

/** How a lookup's upstream calls run (a bulk read bounds how many of its own are in flight at once). */
export interface LookupOptions {
  /** Runs one upstream call (Mojang's or Hypixel's) of this lookup; a cache hit calls it never. */
  readonly upstream?: <T>(call: () => Promise<T>) => Promise<T>;
}

const direct = <T>(call: () => Promise<T>): Promise<T> => call();

export interface PlayersServiceDeps {
  readonly db: Executor;
  readonly hypixel: Pick<HypixelClient, 'player'>;
  readonly mojang: MojangClient;
  /** Cached resources: `player` (UUID -> player, or empty: never joined), `username` (name -> UUID, or empty). */
  readonly players: CachedResource;
  readonly usernames: CachedResource;
  /** Where each fetch's snapshot goes (stored when the player changed). */
  readonly history?: Pick<PlayerHistoryService, 'record'>;
  readonly log: Logger;
  readonly now?: () => number;
}

export function createPlayersService(deps: PlayersServiceDeps): PlayersService {
  const { db, hypixel, mojang, log } = deps;
  const now = deps.now ?? Date.now;
  const repository = createPlayersRepository(db);

  /**
   * One successful fetch, made for `owner`: the player, the name it goes by now, its latest copy and its
   * snapshot (when it changed), together or not at all.
   */
  async function record(uuid: string, player: HypixelPlayer, at: number, owner: bigint | undefined) {
    const by = owner ?? null;
    await inTransaction(db, async (transaction) => {
      const players = createPlayersRepository(transaction);
      await players.countFetch(uuid, player.displayName, at, by);
      if (player.displayName) await players.sawName(uuid, player.displayName, at);
      await players.keepLatestCopy(uuid, player.json, at, by);
      await deps.history?.record(transaction, uuid, player.json, at, by);
    });
  }

  async function fetchPlayer(uuid: string, owner: bigint | undefined): Promise<Buffer> {
    const player = await hypixel.player(uuid, owner);
    if (!player) return Buffer.alloc(0);
    // The answer is good even if recording it fails: serve it, and say so in the log.
    await record(uuid, player, now(), owner).catch((error: unknown) =>
      log.error({ err: error, uuid }, 'could not record a player fetch'),
    );
    return playerResult.wrap(player.json);
  }

  async function lastKnownPlayer(uuid: string): Promise<CacheEntry | undefined> {
    const known = await repository.lastKnown(uuid);
    return known && { bytes: playerResult.wrap(known.json), storedAt: known.fetchedAt };
  }

  async function lookupName(name: string, owner: bigint | undefined): Promise<Buffer> {
    const profile = await mojang.lookup(name, owner);
    return profile ? Buffer.from(profile.id) : Buffer.alloc(0);
  }

  /** Mojang unreachable: a name this service has seen still resolves. */
  async function lastKnownName(name: string): Promise<CacheEntry | undefined> {
    const known = await repository.findByName(name);
    return known && { bytes: Buffer.from(known.uuid), storedAt: known.lastSeenAt };
  }

  const service: PlayersService = {
    async resolve(player, owner, options) {
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
        () => (options?.upstream ?? direct)(() => lookupName(username, owner)),
        () => lastKnownName(username),
      );
      return served.bytes.length > 0
        ? { uuid: served.bytes.toString('utf8') }
        : { unknown: served.freshness };
    },

    async uuidOf(player, owner) {
      const resolved = await service.resolve(player, owner);
      if (!('uuid' in resolved)) throw AppError.of(ErrorKinds.PLAYER_NOT_FOUND);
      return resolved.uuid;
    },

    async lookup(player, owner, options) {
      const resolved = await service.resolve(player, owner, options);
      if ('unknown' in resolved) return { kind: 'unknown_name', freshness: resolved.unknown };
      const { uuid } = resolved;
      const served = await deps.players.get(
        uuid,
        () => (options?.upstream ?? direct)(() => fetchPlayer(uuid, owner)),
        () => lastKnownPlayer(uuid),
      );
      if (served.bytes.length === 0) return { kind: 'never_joined', uuid, freshness: served.freshness };
      return {
        kind: 'found',
        player: new PlayerSnapshot(uuid, served.bytes, served.freshness, served.encoded),
      };
    },
  };
  return service;
}
