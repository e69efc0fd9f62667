import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../platform/auth/route-guard.js';
import { errorResponses } from '../../platform/error-response.js';
import { sendJsonBytes } from '../../platform/http/cache-headers.js';
import { inQuery } from '../../platform/http/input-errors.js';
import { failureAsError } from '../../platform/http/lookup-result.js';
import { PlayerParams } from '../../platform/http/path-params.js';
import { responseDoc } from '../../platform/http/response-docs.js';
import { chargeWork } from '../../platform/limits/work-budget.js';
import { upstreamFailureOf } from '../../upstream/upstream-failure.js';
import { historyBody, sessionsBody } from './player-history.reply.js';
import { HistoryQuery, HistorySchema, SessionsQuery, SessionsSchema } from './player-history.schemas.js';
import type { PlayerHistoryService } from './player-history.service.js';

/** An upstream failure met resolving a username, as an ErrorResponse with the status endpoint 5 would answer. */
const asUpstreamError = failureAsError(upstreamFailureOf);
const TAGS = ['Player'];
const security = [{ bearerAuth: [] }];
/** Snapshots a sessions read goes through for one unit of work (besides a unit per session returned). */
const SNAPSHOTS_PER_UNIT = 100;
/**
 * Bytes of full copies a read parses for one unit of work: a full copy is most of a read's cost (0.75 ms for
 * a typical 46 KB player), so a read over a large player's history costs what it takes.
 */
const FULL_COPY_BYTES_PER_UNIT = 64 * 1024;
const fullCopyUnits = (bytes: number) => Math.ceil(bytes / FULL_COPY_BYTES_PER_UNIT);

/** The pointers of `fields`, given comma-separated, as repeated parameters, or both. */
const pointersOf = (fields: string | readonly string[]) =>
  (typeof fields === 'string' ? [fields] : fields).flatMap((list) => list.split(','));

/** A player's history and sessions, from the snapshots the service keeps of them. */
export const playerHistoryRoutes =
  (history: PlayerHistoryService): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/player/:player/history',
      {
        onRequest: app.requireGrant('player:read'),
        schema: {
          tags: TAGS,
          operationId: 'getPlayerHistory',
          summary: "A player's values over time",
          description:
            'The values of up to 50 fields (JSON Pointers into the player object) at each snapshot the service ' +
            'stored of the player in the range, oldest first: a snapshot is stored at each lookup that found the ' +
            'player changed. More snapshots than `limit` are thinned evenly. Kept HISTORY_RETENTION_DAYS (365 by ' +
            "default). 404 when no snapshot of the player was ever stored. Costs the owner's work budget a unit per " +
            'point returned and per 64 KiB of full copies read, besides the request. Grant: player:read.',
          security,
          params: PlayerParams,
          querystring: HistoryQuery,
          response: {
            200: responseDoc(HistorySchema),
            ...errorResponses(400, 401, 403, 404, 429, 502, 504),
          },
        },
      },
      async (request, reply) => {
        const { owner } = principalOf(request);
        const { fields, ...range } = request.query;
        const found = await history
          .historyOf(request.params.player, { fields: pointersOf(fields), ...range }, owner)
          .catch(inQuery)
          .catch(asUpstreamError);
        await chargeWork(request, found.points.length + fullCopyUnits(found.fullCopyBytes));
        return sendJsonBytes(reply, 200, Buffer.from(historyBody(found)));
      },
    );

    app.get(
      '/player/:player/sessions',
      {
        onRequest: app.requireGrant('player:read'),
        schema: {
          tags: TAGS,
          operationId: 'getPlayerSessions',
          summary: "A player's play sessions",
          description:
            "Play sessions read from the player's snapshots in the range and their `lastLogin`/`lastLogout`, newest " +
            'first, each with the numeric values that changed over it (from the snapshot before the login to the ' +
            "session's last). A player who hides their online status shows none. 404 when no snapshot of the player " +
            "was ever stored. Read from at most the 5000 newest snapshots in the range. Costs the owner's work budget " +
            'a unit per session returned, per 100 snapshots read and per 64 KiB of full copies read, besides the ' +
            'request. ' +
            'Grant: player:read.',
          security,
          params: PlayerParams,
          querystring: SessionsQuery,
          response: {
            200: responseDoc(SessionsSchema),
            ...errorResponses(400, 401, 403, 404, 429, 502, 504),
          },
        },
      },
      async (request, reply) => {
        const { owner } = principalOf(request);
        const found = await history
          .sessionsOf(request.params.player, request.query, owner)
          .catch(inQuery)
          .catch(asUpstreamError);
        await chargeWork(
          request,
          found.sessions.length + Math.ceil(found.snapshotsRead / SNAPSHOTS_PER_UNIT),
        );
        return sendJsonBytes(reply, 200, Buffer.from(sessionsBody(found)));
      },
    );
  };
