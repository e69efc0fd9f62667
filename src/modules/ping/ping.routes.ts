import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../platform/auth/route-guard.js';
import { errorResponse, errorResponses } from '../../platform/error-response.js';
import { inBody, inQuery } from '../../platform/http/input-errors.js';
import { failureAsError } from '../../platform/http/lookup-result.js';
import { PlayerParams } from '../../platform/http/path-params.js';
import {
  COMPRESSED_HEADERS,
  ETAG_HEADERS,
  NOT_MODIFIED,
  responseDoc,
} from '../../platform/http/response-docs.js';
import { chargeWork, takeWork } from '../../platform/limits/work-budget.js';
import { upstreamFailureOf } from '../../upstream/upstream-failure.js';
import type { PingHistoryReplies } from './ping.reply.js';
import {
  PingHistoryQuery,
  PingHistorySchema,
  PingIngestRequestSchema,
  PingIngestResultSchema,
} from './ping.schemas.js';
import type { PingService } from './ping.service.js';

const PATH = '/ping/:player';
/** An upstream failure met resolving a username, as an ErrorResponse with the status endpoint 5 would answer. */
const asUpstreamError = failureAsError(upstreamFailureOf);
const TAGS = ['Ping'];
const security = [{ bearerAuth: [] }];
/** Upstream trouble resolving a username answers as /gamemode/profiles does. */
const RESOLUTION_ERRORS = errorResponses(404, 429, 502, 504);

/** Endpoint 6, and the ingestion of the samples it reads. */
export const pingRoutes =
  (service: PingService, replies: PingHistoryReplies, bodyLimitBytes: number): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      PATH,
      {
        onRequest: app.requireGrant('ping:write'),
        bodyLimit: bodyLimitBytes,
        schema: {
          tags: TAGS,
          operationId: 'ingestPingSamples',
          summary: "Record a player's ping samples",
          description:
            '1 to 1000 samples, stored in one transaction, or none when one is invalid (400 naming it, up to 20). ' +
            'A sample equal to one already stored (same player, at, ping and lobby, whoever sent it) is stored ' +
            'once: a batch sent again changes nothing, and is answered with its samples as duplicates. `at` may ' +
            'be at most PING_MAX_FUTURE_SECONDS (60 by default) after the request is received. A 200 means the ' +
            'new samples are committed, with the daily statistics they fall on. A username is resolved to its ' +
            "UUID. Costs the owner's work budget a unit per sample, besides the request and its body, taken before the " +
            'samples are written (429 when the budget cannot pay). Grant: ping:write.',
          security,
          params: PlayerParams,
          body: PingIngestRequestSchema,
          response: {
            200: responseDoc(PingIngestResultSchema),
            ...errorResponses(400, 401, 403, 413, 415),
            ...RESOLUTION_ERRORS,
            503: errorResponse(
              503,
              'Not acknowledged: the write queue is full (`WRITE_QUEUE_FULL`, Retry-After: 1), the database or ' +
                'Mojang is unavailable, or the instance is shutting down. Nothing is stored, except when the ' +
                'database stopped answering during the commit itself, which it may have finished: sending the batch ' +
                'again is always safe (a sample stored already counts as a duplicate).',
            ),
          },
        },
      },
      async (request) => {
        const { owner } = principalOf(request);
        // Each sample is a row to check and write, whether or not it turns out new: paid before the write,
        // which an owner who cannot pay for it does not get (429).
        await takeWork(request, request.body.samples.length);
        const { uuid, stored, duplicates } = await service
          .ingest(request.params.player, request.body.samples, owner)
          .catch(inBody)
          .catch(asUpstreamError);
        return { player: uuid, stored, duplicates };
      },
    );

    app.get(
      PATH,
      {
        onRequest: app.requireGrant('ping:read'),
        // Kept answers carry their compressed copies (platform/http/stored-body.ts).
        compress: false,
        schema: {
          tags: TAGS,
          operationId: 'getPingHistory',
          summary: "Get a player's ping history",
          description:
            'One record per UTC day with samples, newest first: avg, min and max over all its samples, its history ' +
            '(the latest values, in time order), and its last sample. A player with no samples: `{data: []}`. ' +
            'Read from per-day aggregates kept on write; an answer is kept while the player has no new sample, ' +
            'with an `ETag` (`If-None-Match` naming it: 304). ' +
            "Costs the owner's work budget a unit per day returned, besides the request. Grant: ping:read.",
          security,
          params: PlayerParams,
          querystring: PingHistoryQuery,
          response: {
            200: responseDoc(PingHistorySchema, { headers: { ...ETAG_HEADERS, ...COMPRESSED_HEADERS } }),
            304: NOT_MODIFIED,
            ...errorResponses(400, 401, 403),
            ...RESOLUTION_ERRORS,
          },
        },
      },
      async (request, reply) => {
        const { owner } = principalOf(request);
        const history = await service
          .history(request.params.player, request.query, owner)
          .catch(inQuery)
          .catch(asUpstreamError);
        await chargeWork(request, history.days.length);
        return replies.send(request, reply, history, request.query);
      },
    );
  };
