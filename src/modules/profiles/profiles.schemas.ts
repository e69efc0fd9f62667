import { Type } from 'typebox';
import { refTo } from '../../platform/open-object.js';
import { SkyBlockProfileSchema } from './skyblock-profile.schemas.js';

/** Found profiles: the cached ProfilesResult body as it is sent (profiles.service.ts keeps it so), no `throttle`. */
export const ProfilesFoundSchema = Type.Object(
  {
    success: Type.Literal(true),
    profiles: Type.Array(refTo(SkyBlockProfileSchema), {
      description: "The player's SkyBlock profiles as the upstream sent them ([] for none).",
    }),
  },
  {
    additionalProperties: false,
    description: 'The profiles, from the cache while fresh, from the upstream, or a stale copy standing in.',
  },
);

export const PROFILES_NOT_FOUND = 'No such player: no Minecraft player has this username.';
