import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../platform/auth/route-guard.js';
import { errorResponses } from '../../platform/error-response.js';
import { type QuotaStandings, setQuotaHeaders } from '../../platform/http/lookup-result.js';
import { RATE_LIMIT_HEADERS } from '../../platform/http/rate-limit-headers.js';
import { responseDoc } from '../../platform/http/response-docs.js';
import { takeWork, WorkCost } from '../../platform/limits/work-budget.js';
import { upstreamFailureOf } from '../../upstream/upstream-failure.js';
import { sendBulkResults } from './players-bulk.reply.js';
import {
  BULK_BODY_LIMIT_BYTES,
  PlayersBulkRequestSchema,
  PlayersBulkResultSchema,
} from './players-bulk.schemas.js';
import {
  BULK_MAX_PLAYERS,
  BULK_UPSTREAM_CONCURRENCY,
  distinctPlayers,
  type PlayersBulkService,
} from './players-bulk.service.js';

/** `POST /players`: up to 100 players in one call, each as `GET /player/{player}` answers it. */
export const playersBulkRoutes =
  (service: PlayersBulkService, quota: QuotaStandings): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/players',
      {
        // Joined from the cached bodies as they are (players-bulk.reply.ts): compressing megabytes per call
        // would cost more than the reads themselves.
        compress: false,
        onRequest: app.requireGrant('player:read'),
        bodyLimit: BULK_BODY_LIMIT_BYTES,
        config: { workCost: WorkCost.read },
        schema: {
          tags: ['Player'],
          operationId: 'getPlayers',
          summary: 'Fetch many players at once',
          description:
            `1 to ${BULK_MAX_PLAYERS} players (UUIDs, dashed or not, or usernames) in one call. Each result is exactly ` +
            'the body `GET /player/{player}` would answer for that player: cached copies are served, misses are ' +
            "fetched within the caller's share of the upstream key, and the rest answer `throttle: true`. Any " +
            'number of spellings of one player cost one upstream call; the same string given twice is one result. ' +
            `Misses go out ${BULK_UPSTREAM_CONCURRENCY} at a time; cache hits never wait for them. The answer is ` +
            "200 whatever each item says. Costs the owner's work budget a unit per distinct player (the request's " +
            'unit included) and a unit per KiB of body, taken before any lookup (429 when the budget cannot pay: ' +
            'nothing is looked up). Sent uncompressed. Grant: player:read.',
          security: [{ bearerAuth: [] }],
          body: PlayersBulkRequestSchema,
          response: {
            200: responseDoc(PlayersBulkResultSchema, {
              headers: {
                'Cache-Control': {
                  description:
                    'A bulk answer is never kept by a cache (its items differ in freshness): `no-store`.',
                  schema: { type: 'string', enum: ['no-store'] },
                  required: true,
                },
                ...RATE_LIMIT_HEADERS,
              },
            }),
            ...errorResponses(400, 401, 403, 429),
          },
        },
      },
      async (request, reply) => {
        const { owner } = principalOf(request);
        // A unit per distinct player beyond the request's own, before anything is looked up.
        await takeWork(request, distinctPlayers(request.body.players).length - WorkCost.read);
        const items = await service.lookupMany(request.body.players, owner);
        setQuotaHeaders(reply, await quota.status(owner));
        return sendBulkResults(reply, items, upstreamFailureOf);
      },
    );
  };
