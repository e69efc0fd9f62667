import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest, preValidationAsyncHookHandler } from 'fastify';
import { principalOf } from '../../platform/auth/route-guard.js';
import { errorResponses } from '../../platform/error-response.js';
import { inBody, inQuery } from '../../platform/http/input-errors.js';
import { responseDoc } from '../../platform/http/response-docs.js';
import { WorkCost } from '../../platform/limits/work-budget.js';
import { DEFAULT_PAGE_SIZE } from '../../platform/pagination.js';
import { applicationDetailWire, applicationWire } from './applications.reply.js';
import {
  ApplicationDetailSchema,
  ApplicationListQuery,
  ApplicationListSchema,
  ApplicationParams,
  ApplicationRequestSchema,
  ApplicationSchema,
  TransitionRequestSchema,
} from './applications.schemas.js';
import type { Actor, ApplicationAction, ApplicationsService } from './applications.service.js';

const BASE = '/admin/developer/applications';
// One tag per operation: every application operation, the reviewers' too, is the developer programme's.
const TAGS = ['Developer'];

/** The caller as the service sees them: a token's owner, a reviewer when it carries the review grant. */
const actorOf = (request: FastifyRequest): Actor => {
  const principal = principalOf(request);
  return { kind: 'token', owner: principal.owner, reviewer: principal.grants.has('applications:review') };
};

/** A change's body is optional: no body is no reason. */
const bodyOptional: preValidationAsyncHookHandler = async (request) => {
  request.body ??= {};
};

const TRANSITIONS: Readonly<
  Record<ApplicationAction, { operationId: string; summary: string; description: string }>
> = {
  approve: {
    operationId: 'approveApplication',
    summary: 'Approve a pending application',
    description:
      "pending -> approved. Makes the application's key, which its owner collects (POST .../{id}/key): the " +
      'answer carries no secret. A reviewer may not approve their own application, nor one asking for a grant ' +
      'only an operator gives. Grant: applications:review.',
  },
  reject: {
    operationId: 'rejectApplication',
    summary: 'Reject a pending application',
    description: 'pending -> rejected (final). Grant: applications:review.',
  },
  revoke: {
    operationId: 'revokeApplication',
    summary: 'Revoke an approved application',
    description:
      'approved -> revoked (final). Ends its key and every token made from it: they answer 401 from then on. ' +
      'Grant: applications:review.',
  },
  withdraw: {
    operationId: 'withdrawApplication',
    summary: 'Withdraw your pending application',
    description: "pending -> withdrawn (final). The application's owner only; any valid token of theirs.",
  },
};

/**
 * Endpoint 1 (`POST /admin/developer/applications`) and the review side: list, read one, and the changes
 * of state.
 */
export const applicationsRoutes =
  (service: ApplicationsService): FastifyPluginAsyncTypebox =>
  async (app) => {
    // A bearer token, or the developer portal's session (with its CSRF token when it changes anything).
    const security = app.portalSecurity;
    app.post(
      BASE,
      {
        // The interface's rule: a token whose owner ID cannot be read makes this a 400.
        onRequest: app.requireGrant(undefined, { noOwnerStatus: 400, session: true }),
        config: { workCost: WorkCost.write },
        schema: {
          tags: TAGS,
          operationId: 'createApplication',
          summary: 'Create a developer application',
          description:
            "Applies for grants. The owner is the access token's owner (`owner` in the body, when sent, must be it); " +
            '`id`, `applied_at` and `currentState` are assigned by the service and ignored when sent. The new ' +
            'application is pending. An owner may have a limited number of pending applications (5 by default): ' +
            'beyond it, 409. Any valid token.',
          security,
          body: ApplicationRequestSchema,
          response: {
            200: responseDoc(ApplicationSchema, { description: 'The application as stored, pending.' }),
            ...errorResponses(400, 401, 403, 409, 413, 415),
          },
        },
      },
      async (request) => {
        const { name, description = '', grants, owner } = request.body;
        const principal = principalOf(request);
        return applicationWire(
          await service
            .apply(principal.owner, { name, description, grants, claimedOwner: owner })
            .catch(inBody),
        );
      },
    );

    app.get(
      BASE,
      {
        onRequest: app.requireGrant(undefined, { session: true }),
        schema: {
          tags: TAGS,
          operationId: 'listApplications',
          summary: 'List developer applications',
          description:
            'Newest first, a page at a time (`cursor` is the `next_cursor` of the page before). With the ' +
            "applications:review grant, everyone's, filtered by `state` and `owner`; otherwise your own only " +
            '(`owner`, if given, must be you).',
          security,
          querystring: ApplicationListQuery,
          response: {
            200: responseDoc(ApplicationListSchema),
            ...errorResponses(400, 401, 403),
          },
        },
      },
      async (request) => {
        const page = await service
          .list(actorOf(request), { ...request.query, limit: request.query.limit ?? DEFAULT_PAGE_SIZE })
          .catch(inQuery);
        return { data: page.applications.map(applicationWire), next_cursor: page.nextCursor ?? null };
      },
    );

    app.get(
      `${BASE}/:id`,
      {
        onRequest: app.requireGrant(undefined, { session: true }),
        schema: {
          tags: TAGS,
          operationId: 'getApplication',
          summary: 'Read one developer application',
          description:
            'The application with its history (every change: from, to, when, who, why). Its owner, or a token ' +
            'with the applications:review grant.',
          security,
          params: ApplicationParams,
          response: {
            200: responseDoc(ApplicationDetailSchema),
            ...errorResponses(400, 401, 403, 404),
          },
        },
      },
      async (request) => applicationDetailWire(await service.get(actorOf(request), request.params.id)),
    );

    for (const [action, doc] of Object.entries(TRANSITIONS) as [
      ApplicationAction,
      (typeof TRANSITIONS)[ApplicationAction],
    ][]) {
      app.post(
        `${BASE}/:id/${action}`,
        {
          onRequest: app.requireGrant(action === 'withdraw' ? undefined : 'applications:review', {
            session: true,
          }),
          preValidation: bodyOptional,
          config: { workCost: WorkCost.write },
          schema: {
            tags: TAGS,
            ...doc,
            security,
            params: ApplicationParams,
            body: TransitionRequestSchema,
            response: {
              200: responseDoc(ApplicationDetailSchema),
              ...errorResponses(400, 401, 403, 404, 409, 413, 415),
            },
          },
        },
        async (request) =>
          applicationDetailWire(
            await service.transition(actorOf(request), request.params.id, action, request.body?.reason),
          ),
      );
    }
  };
