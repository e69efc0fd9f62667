import { Type } from 'typebox';
import { resultShape } from '../../upstream/upstream-result.js';

export const ProfilesResultSchema = resultShape(
  'profiles',
  Type.Unknown({
    description: "The player's SkyBlock profiles as the upstream sent them ([] for none); null on failure.",
  }),
  'ProfilesResult, with the failures and headers of PlayerResult.',
);
