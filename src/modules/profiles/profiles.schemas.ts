import { Type } from 'typebox';

/** Found profiles: the cached ProfilesResult body as it is sent (profiles.service.ts keeps it so), no `throttle`. */
export const ProfilesFoundSchema = Type.Object(
  {
    success: Type.Literal(true),
    profiles: Type.Array(Type.Unknown(), {
      description: "The player's SkyBlock profiles as the upstream sent them ([] for none).",
    }),
  },
  {
    additionalProperties: false,
    description: 'The profiles, from the cache while fresh, from the upstream, or a stale copy standing in.',
  },
);

export const PROFILES_NOT_FOUND = 'No such player: no Minecraft player has this username.';
