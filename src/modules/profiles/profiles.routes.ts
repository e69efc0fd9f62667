import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { sendAnswer } from '../../platform/cache/cached-answer.js';
import { PlayerParamsSchema, ProfilesResultSchema, resultResponses } from '../players/players.schemas.js';
import type { ProfilesService } from './profiles.service.js';

export const profilesRoutes: FastifyPluginAsyncTypebox<{ service: ProfilesService }> = async (
  app,
  { service },
) => {
  app.get(
    '/gamemode/profiles/:player',
    {
      preHandler: app.requireGrant('profiles:read'),
      schema: {
        tags: ['Gamemode'],
        summary: "Get a player's game-mode (SkyBlock) profiles",
        description:
          'The SkyBlock profiles of a UUID or username (`[]` when there are none), cached for 120 s by default, with the ' +
          'failures and cache headers of /player/{player}. Grant: profiles:read.',
        security: [{ bearerAuth: [] }],
        params: PlayerParamsSchema,
        response: resultResponses(ProfilesResultSchema),
      },
    },
    async (request, reply) => sendAnswer(reply, await service.profiles(request.params.player)),
  );
};
