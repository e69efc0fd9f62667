import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { lookupHandler, resultResponses } from '../../platform/http/lookup-result.js';
import { PlayerParams } from '../../platform/http/path-params.js';
import { upstreamFailureOf } from '../../upstream/upstream-failure.js';
import type { Upstreams } from '../../upstream/upstreams.js';
import { sendPlayerLookup } from './players.reply.js';
import { PLAYER_NOT_FOUND, PlayerFoundSchema } from './players.schemas.js';
import type { PlayersService } from './players.service.js';

export const playersRoutes =
  (service: PlayersService, quota: Upstreams['quota']): FastifyPluginAsyncTypebox =>
  async (app) => {
    const answer = lookupHandler({
      field: 'player',
      quota,
      failureOf: upstreamFailureOf,
      lookup: service.lookup,
      send: sendPlayerLookup,
    });
    app.get(
      '/player/:player',
      {
        // Found values go out precompressed (lookup-result.ts), not through @fastify/compress.
        compress: false,
        onRequest: app.requireGrant('player:read'),
        schema: {
          tags: ['Player'],
          operationId: 'getPlayer',
          summary: "Fetch a player's data",
          description:
            'The Hypixel player object for a UUID or username, from the cache while fresh (60 s by default), otherwise from ' +
            'the upstream; a stale copy (up to 24 h old) stands in when the upstream fails. Failures of the lookup answer ' +
            'in the result shape `{success: false, cause, throttle, player: null}`, anything else an ErrorResponse. ' +
            'Grant: player:read.',
          security: [{ bearerAuth: [] }],
          params: PlayerParams,
          response: resultResponses({
            field: 'player',
            found: PlayerFoundSchema,
            notFound: PLAYER_NOT_FOUND,
          }),
        },
      },
      async (request, reply) => answer(request, reply, request.params.player),
    );
  };
