import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../platform/auth/route-guard.js';
import { PlayerParams } from '../../platform/http/path-params.js';
import { answerLookup, resultResponses } from '../../upstream/upstream-result.js';
import type { Upstreams } from '../../upstream/upstreams.js';
import { sendProfilesLookup } from './profiles.reply.js';
import { PROFILES_NOT_FOUND, ProfilesFoundSchema } from './profiles.schemas.js';
import type { ProfilesService } from './profiles.service.js';

export const profilesRoutes =
  (service: ProfilesService, quota: Upstreams['quota']): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/gamemode/profiles/:player',
      {
        preHandler: app.requireGrant('profiles:read'),
        schema: {
          tags: ['Gamemode'],
          operationId: 'getGamemodeProfiles',
          summary: "Get a player's game-mode (SkyBlock) profiles",
          description:
            'The SkyBlock profiles of a UUID or username (`[]` when there are none), cached for 120 s by default, with the ' +
            'failures and cache headers of /player/{player}. Grant: profiles:read.',
          security: [{ bearerAuth: [] }],
          params: PlayerParams,
          response: resultResponses({
            field: 'profiles',
            found: ProfilesFoundSchema,
            notFound: PROFILES_NOT_FOUND,
          }),
        },
      },
      async (request, reply) => {
        const owner = String(principalOf(request).owner);
        return answerLookup(reply, {
          field: 'profiles',
          owner,
          quota,
          lookup: () => service.lookup(request.params.player, owner),
          send: sendProfilesLookup,
        });
      },
    );
  };
