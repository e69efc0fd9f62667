import type { CacheEntry } from '../../platform/cache/cache.js';
import {
  answerFromFailure,
  answerFromServed,
  type CachedAnswer,
} from '../../platform/cache/cached-answer.js';
import type { createCachedResource } from '../../platform/cache/cached-resource.js';
import type { HypixelClient } from '../../upstream/hypixel.js';
import { UpstreamFailure } from '../../upstream/upstream-failure.js';
import type { PlayersService } from '../players/players.service.js';

export interface ProfilesService {
  /** The player's SkyBlock profiles as served by `GET /gamemode/profiles/{player}`. */
  profiles(player: string): Promise<CachedAnswer>;
}

export interface ProfilesServiceDeps {
  readonly hypixel: HypixelClient;
  readonly players: PlayersService;
  /** The cached resource `profiles` (UUID -> profiles). */
  readonly profiles: ReturnType<typeof createCachedResource>;
  readonly now?: () => number;
}

export function createProfilesService(deps: ProfilesServiceDeps): ProfilesService {
  const now = deps.now ?? Date.now;

  async function fetchProfiles(uuid: string): Promise<CacheEntry> {
    // A player with no profiles, or who never joined, has `profiles: []`.
    const profiles = await deps.hypixel.profiles(uuid);
    return { status: 200, body: Buffer.from(`{"success":true,"profiles":${profiles}}`), storedAt: now() };
  }

  return {
    async profiles(player) {
      try {
        const resolved = await deps.players.resolve(player);
        if ('unknown' in resolved) return deps.players.unknownAnswer('profiles', resolved.unknown);
        const served = await deps.profiles.get(resolved.uuid, () => fetchProfiles(resolved.uuid));
        return answerFromServed(served, now());
      } catch (error) {
        if (error instanceof UpstreamFailure) return answerFromFailure('profiles', error);
        throw error;
      }
    },
  };
}
