import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { sendAnswer } from '../../platform/cache/cached-answer.js';
import { PlayerParamsSchema, PlayerResultSchema, resultResponses } from './players.schemas.js';
import type { PlayersService } from './players.service.js';

export const playersRoutes: FastifyPluginAsyncTypebox<{ service: PlayersService }> = async (
  app,
  { service },
) => {
  app.get(
    '/player/:player',
    {
      preHandler: app.requireGrant('player:read'),
      schema: {
        tags: ['Player'],
        summary: "Fetch a player's data",
        description:
          'The Hypixel player object for a UUID or username, from the cache while fresh (60 s by default), otherwise from ' +
          'the upstream; a stale copy (up to 24 h old) stands in when the upstream fails. Grant: player:read.',
        security: [{ bearerAuth: [] }],
        params: PlayerParamsSchema,
        response: resultResponses(PlayerResultSchema),
      },
    },
    async (request, reply) => sendAnswer(reply, await service.player(request.params.player)),
  );
};
