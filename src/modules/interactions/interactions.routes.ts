import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../platform/auth/route-guard.js';
import { errorResponse, errorResponses } from '../../platform/error-response.js';
import { responseDoc } from '../../platform/http/response-docs.js';
import {
  InteractionLogListQuery,
  InteractionLogListSchema,
  InteractionLogRequestSchema,
  InteractionLogSchema,
} from './interactions.schemas.js';
import type { InteractionsService, StoredLog } from './interactions.service.js';

const PATH = '/messenger/logging/interaction';

/** Endpoint 3 (`POST /messenger/logging/interaction`) and the reviewers' read side. */
export const interactionsRoutes =
  (service: InteractionsService): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      PATH,
      {
        onRequest: app.requireGrant('messenger:log'),
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
              'Not stored: the write queue is full (`WRITE_QUEUE_FULL`, Retry-After: 1), the database is ' +
                'unavailable (Retry-After: 2) or the instance is shutting down (Retry-After: 1).',
            ),
          },
        },
      },
      async (request) => {
        const body = request.body;
        const logged = await service.log(principalOf(request).owner, body);
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
            'Newest first, a page at a time (`cursor` is the `next_cursor` of the page before), filtered by user, ' +
            'server and receive time. Never with the interaction tokens. Grant: messenger:read.',
          security: [{ bearerAuth: [] }],
          querystring: InteractionLogListQuery,
          response: {
            200: responseDoc(InteractionLogListSchema),
            ...errorResponses(400, 401, 403),
          },
        },
      },
      async (request) => {
        const { since, user_id, server_id, ...page } = request.query;
        const result = await service.list({ ...page, userId: user_id, serverId: server_id, since });
        return { data: result.logs.map(storedLogWire), next_cursor: result.nextCursor ?? null };
      },
    );
  };

const storedLogWire = (log: StoredLog) => ({
  id: log.id,
  received_at: new Date(log.receivedAt).toISOString(),
  owner: log.owner,
  ...log.document,
});
