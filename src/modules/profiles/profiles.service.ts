import type { CachedResource, Freshness } from '../../platform/cache/cached-resource.js';
import type { ContentEncoding } from '../../platform/compression.js';
import { jsonEnvelope } from '../../platform/json.js';
import type { HypixelClient } from '../../upstream/hypixel.js';
import type { PlayersService } from '../players/players.service.js';

/**
 * A player's profiles are kept in the cache as the bytes of their ProfilesResult body, so that a hit is
 * sent as it is (as players are; docs/decisions.md).
 */
const profilesResult = jsonEnvelope('{"success":true,"profiles":');

/**
 * A player's SkyBlock profiles: the array as Hypixel sent it (`[]` for none), and how old the copy is.
 * Its bytes are the cache's own: read them, never write to them.
 */
export class ProfilesSnapshot {
  constructor(
    readonly uuid: string,
    /** The ProfilesResult body `{"success":true,"profiles":[...]}`, as kept in the cache. */
    readonly body: Buffer,
    readonly freshness: Freshness,
    /** The body compressed in an encoding, kept beside it once made. */
    readonly encoded: (encoding: ContentEncoding) => Promise<Buffer>,
  ) {}

  /** The profiles array exactly as Hypixel sent it (JSON text bytes): a view into `body`. */
  get json(): Buffer {
    return profilesResult.inner(this.body);
  }
}

export type ProfilesLookup =
  | { readonly kind: 'found'; readonly profiles: ProfilesSnapshot }
  | { readonly kind: 'unknown_name'; readonly freshness: Freshness };

export interface ProfilesService {
  /**
   * The SkyBlock profiles of a UUID or username; throws UpstreamFailure when no copy can stand in.
   * `owner` is charged for the upstream calls it costs, as in PlayersService.
   */
  lookup(player: string, owner?: bigint): Promise<ProfilesLookup>;
}

export interface ProfilesServiceDeps {
  readonly hypixel: Pick<HypixelClient, 'profiles'>;
  readonly players: Pick<PlayersService, 'resolve'>;
  /** The cached resource `profiles` (UUID -> profiles). */
  readonly profiles: CachedResource;
}

export function createProfilesService(deps: ProfilesServiceDeps): ProfilesService {
  // A player with no profiles, or who never joined, has `profiles: []`.
  const fetchProfiles = async (uuid: string, owner: bigint | undefined) =>
    profilesResult.wrap(await deps.hypixel.profiles(uuid, owner));

  return {
    async lookup(player, owner) {
      const resolved = await deps.players.resolve(player, owner);
      if ('unknown' in resolved) return { kind: 'unknown_name', freshness: resolved.unknown };
      const { uuid } = resolved;
      const served = await deps.profiles.get(uuid, () => fetchProfiles(uuid, owner));
      return {
        kind: 'found',
        profiles: new ProfilesSnapshot(uuid, served.bytes, served.freshness, served.encoded),
      };
    },
  };
}
