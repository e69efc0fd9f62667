import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { lookupHandler, resultResponses } from '../../platform/http/lookup-result.js';
import { PlayerParams } from '../../platform/http/path-params.js';
import { upstreamFailureOf } from '../../upstream/upstream-failure.js';
import type { Upstreams } from '../../upstream/upstreams.js';
import { sendProfilesLookup } from './profiles.reply.js';
import { PROFILES_NOT_FOUND, ProfilesFoundSchema } from './profiles.schemas.js';
import type { ProfilesService } from './profiles.service.js';

export const profilesRoutes =
  (service: ProfilesService, quota: Upstreams['quota']): FastifyPluginAsyncTypebox =>
  async (app) => {
    const answer = lookupHandler({
      field: 'profiles',
      quota,
      failureOf: upstreamFailureOf,
      lookup: service.lookup,
      send: sendProfilesLookup,
    });
    app.get(
      '/gamemode/profiles/:player',
      {
        // Found values go out precompressed (lookup-result.ts), not through @fastify/compress.
        compress: false,
        onRequest: app.requireGrant('profiles:read'),
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
      async (request, reply) => answer(request, reply, request.params.player),
    );
  };
