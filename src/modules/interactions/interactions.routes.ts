import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { principalOf } from '../../platform/auth/route-guard.js';
import { errorResponse, errorResponses } from '../../platform/error-response.js';
import { inBody, inQuery } from '../../platform/http/input-errors.js';
import { responseDoc } from '../../platform/http/response-docs.js';
import { chargeWork, LISTED_BYTES_PER_UNIT, WorkCost } from '../../platform/limits/work-budget.js';
import { DEFAULT_PAGE_SIZE } from '../../platform/pagination.js';
import {
  InteractionLogListQuery,
  InteractionLogListSchema,
  InteractionLogRequestSchema,
  InteractionLogSchema,
} from './interactions.schemas.js';
import {
  AUDIT_GRANT,
  type InteractionsService,
  type Reader,
  type StoredLog,
} from './interactions.service.js';

const PATH = '/messenger/logging/interaction';

/** Endpoint 3 (`POST /messenger/logging/interaction`) and the reviewers' read side. */
export const interactionsRoutes =
  (service: InteractionsService): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      PATH,
      {
        onRequest: app.requireGrant('messenger:log'),
        config: { workCost: WorkCost.write },
        schema: {
          tags: ['Messenger'],
          operationId: 'logInteraction',
          summary: 'Log a bot interaction',
          description:
            "Stores the log with its receive time and the calling token's owner, and records the user and server it " +
            'mentions. A 200 means the log is committed to the database. The interaction token is never stored or ' +
            'logged. Logging the same interaction again (same token) answers its first record and stores nothing. ' +
            'Grant: messenger:log.',
          security: [{ bearerAuth: [] }],
          body: InteractionLogRequestSchema,
          response: {
            200: responseDoc(InteractionLogSchema),
            ...errorResponses(400, 401, 403, 413, 415),
            503: errorResponse(
              503,
              'Not acknowledged: the write queue is full (`WRITE_QUEUE_FULL`, Retry-After: 1), the database is ' +
                'unavailable (Retry-After: 2) or the instance is shutting down (Retry-After: 1). Nothing is stored, ' +
                'except when the database stopped answering during the commit itself, which it may have finished: ' +
                'sending the log again is always safe (a log stored already is not stored twice).',
            ),
          },
        },
      },
      async (request) => {
        const body = request.body;
        const logged = await service.log(principalOf(request).owner, body).catch(inBody);
        const { document } = logged;
        // The token as sent: the first record of a repeat has none of its own, and it is the same token.
        return {
          ...document,
          interaction: { ...document.interaction, interaction_token: body.interaction.interaction_token },
        };
      },
    );

    app.get(
      PATH,
      {
        onRequest: app.requireGrant('messenger:read'),
        schema: {
          tags: ['Messenger'],
          operationId: 'listInteractionLogs',
          summary: 'List logged bot interactions',
          description:
            "The caller's own logs (those its owner's tokens logged), newest first, a page at a time (`cursor` is " +
            'the `next_cursor` of the page before), filtered by user, server and receive time. With the ' +
            "messenger:audit grant, every owner's, or one owner's with `owner`; without it, naming another owner " +
            "is a 403 NOT_RESOURCE_OWNER. Never with the interaction tokens. Costs the owner's work budget a unit " +
            'per 256 bytes of the logs returned, besides the request. Grant: messenger:read.',
          security: [{ bearerAuth: [] }],
          querystring: InteractionLogListQuery,
          response: {
            200: responseDoc(InteractionLogListSchema),
            ...errorResponses(400, 401, 403),
          },
        },
      },
      async (request) => {
        const { owner, since, user_id, server_id, ...page } = request.query;
        const result = await service
          .list(readerOf(request), {
            ...page,
            limit: page.limit ?? DEFAULT_PAGE_SIZE,
            owner: ownerNamed(owner),
            userId: user_id,
            serverId: server_id,
            since,
          })
          .catch(inQuery);
        await chargeWork(request, Math.ceil(result.bytes / LISTED_BYTES_PER_UNIT));
        return { data: result.logs.map(storedLogWire), next_cursor: result.nextCursor ?? null };
      },
    );
  };

/** The caller as a reader of interaction logs: its owner, and whether it audits every owner's. */
const readerOf = (request: FastifyRequest): Reader => {
  const principal = principalOf(request);
  return { owner: principal.owner, auditor: principal.grants.has(AUDIT_GRANT) };
};

/** The owner a query's `owner` names (`0`, the owner of what was kept from before owners, comes as text). */
const ownerNamed = (owner: bigint | '0' | undefined): bigint | undefined =>
  owner === undefined ? undefined : BigInt(owner);

const storedLogWire = (log: StoredLog) => ({
  id: log.id,
  received_at: new Date(log.receivedAt).toISOString(),
  owner: log.owner,
  ...log.document,
});
