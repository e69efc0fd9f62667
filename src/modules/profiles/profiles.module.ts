import type { AppModule } from '../../platform/app-module.js';
import type { Caching } from '../../platform/cache/caching.js';
import type { Upstreams } from '../../upstream/upstreams.js';
import type { PlayersService } from '../players/players.service.js';
import { profilesRoutes } from './profiles.routes.js';
import { createProfilesService, type ProfilesService } from './profiles.service.js';
import { SKYBLOCK_PROFILE_SCHEMAS } from './skyblock-profile.schemas.js';

export interface ProfilesModuleDeps {
  readonly caching: Caching;
  readonly upstreams: Pick<Upstreams, 'hypixel' | 'quota'>;
  /** Resolves `{player}` (usernames through the players' own cache and budget). */
  readonly players: PlayersService;
  readonly settings: { readonly profilesFreshSeconds: number; readonly staleIfErrorSeconds: number };
}

/** SkyBlock profiles: `GET /gamemode/profiles/{player}`, on top of the players service. */
export function createProfilesModule({
  caching,
  upstreams,
  players,
  settings,
}: ProfilesModuleDeps): AppModule<ProfilesService> {
  const service = createProfilesService({
    hypixel: upstreams.hypixel,
    players,
    profiles: caching.resource({
      name: 'profiles',
      freshMs: () => settings.profilesFreshSeconds * 1000,
      staleIfErrorMs: settings.staleIfErrorSeconds * 1000,
    }),
  });
  return {
    name: 'profiles',
    service,
    schemas: SKYBLOCK_PROFILE_SCHEMAS,
    routes: profilesRoutes(service, upstreams.quota),
  };
}
