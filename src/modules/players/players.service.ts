import type { FastifyBaseLogger } from 'fastify';
import type { CacheEntry } from '../../platform/cache/cache.js';
import {
  answerFromFailure,
  answerFromServed,
  type CachedAnswer,
  failureBody,
} from '../../platform/cache/cached-answer.js';
import type { createCachedResource, Served } from '../../platform/cache/cached-resource.js';
import type { HypixelClient } from '../../upstream/hypixel.js';
import type { MojangClient } from '../../upstream/mojang.js';
import { UpstreamFailure } from '../../upstream/upstream-failure.js';
import type { PlayersRepository } from './players.repository.js';

type CachedResource = ReturnType<typeof createCachedResource>;

const DASHED_UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const UNDASHED_UUID = /^[0-9a-fA-F]{32}$/;

/** A `{player}` path parameter: a UUID (dashed or not, any case) or a Minecraft username. */
export const PLAYER_PATTERN =
  '^([0-9a-fA-F]{32}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|[A-Za-z0-9_]{1,16})$';

/** Who a `{player}` parameter names: a UUID, or nobody (an unknown username), with the lookup's cache facts. */
export type Resolved = { readonly uuid: string } | { readonly unknown: Served };

export interface PlayersService {
  /** Turns a UUID or a username into an undashed lowercase UUID; throws UpstreamFailure if it cannot tell. */
  resolve(player: string): Promise<Resolved>;
  /** The player's data as served by `GET /player/{player}`. */
  player(player: string): Promise<CachedAnswer>;
  /** The answer for an unknown username, in the result shape of `field`. */
  unknownAnswer(field: 'player' | 'profiles', unknown: Served): CachedAnswer;
}

export interface PlayersServiceDeps {
  readonly hypixel: HypixelClient;
  readonly mojang: MojangClient;
  readonly repository: PlayersRepository;
  /** Cached resources: `player` (UUID -> data) and `username` (name -> UUID). */
  readonly players: CachedResource;
  readonly usernames: CachedResource;
  readonly log: FastifyBaseLogger;
  readonly now?: () => number;
}

const NEVER_JOINED = failureBody('player', 'This player has never joined Hypixel');
const UNKNOWN_NAME_CAUSE = 'No Minecraft player has this username';

export function createPlayersService(deps: PlayersServiceDeps): PlayersService {
  const { hypixel, mojang, repository, log } = deps;
  const now = deps.now ?? Date.now;
  const playerBody = (json: string) => Buffer.from(`{"success":true,"throttle":false,"player":${json}}`);

  async function fetchPlayer(uuid: string): Promise<CacheEntry> {
    const player = await hypixel.player(uuid);
    const at = now();
    if (!player) return { status: 404, body: NEVER_JOINED, storedAt: at };
    // The answer is good even if recording it fails: serve it, and say so in the log.
    await repository
      .recordFetch({ uuid, name: player.displayName, json: player.json, at })
      .catch((error: unknown) => log.error({ err: error, uuid }, 'could not record a player fetch'));
    return { status: 200, body: playerBody(player.json), storedAt: at };
  }

  async function lookupName(name: string): Promise<CacheEntry> {
    const profile = await mojang.lookup(name);
    const at = now();
    if (!profile) return { status: 404, body: Buffer.alloc(0), storedAt: at };
    return { status: 200, body: Buffer.from(profile.id), storedAt: at };
  }

  const service: PlayersService = {
    async resolve(player) {
      if (UNDASHED_UUID.test(player) || DASHED_UUID.test(player))
        return { uuid: player.replaceAll('-', '').toLowerCase() };
      const served = await deps.usernames.get(
        player.toLowerCase(),
        () => lookupName(player),
        // Mojang unreachable: a name this service has seen still resolves.
        async () => {
          const known = await repository.findByName(player);
          return known && { status: 200, body: Buffer.from(known.uuid), storedAt: known.lastSeenAt };
        },
      );
      return served.entry.status === 200 ? { uuid: served.entry.body.toString('utf8') } : { unknown: served };
    },

    async player(player) {
      try {
        const resolved = await service.resolve(player);
        if ('unknown' in resolved) return service.unknownAnswer('player', resolved.unknown);
        const { uuid } = resolved;
        const served = await deps.players.get(
          uuid,
          () => fetchPlayer(uuid),
          async () => {
            const known = await repository.lastKnown(uuid);
            return known && { status: 200, body: playerBody(known.json), storedAt: known.fetchedAt };
          },
        );
        return answerFromServed(served, now());
      } catch (error) {
        if (error instanceof UpstreamFailure) return answerFromFailure('player', error);
        throw error;
      }
    },

    unknownAnswer(field, unknown) {
      const answer = answerFromServed(unknown, now());
      return { ...answer, status: 404, body: failureBody(field, UNKNOWN_NAME_CAUSE) };
    },
  };
  return service;
}
