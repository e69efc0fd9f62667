import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest, preValidationAsyncHookHandler } from 'fastify';
import { principalOf } from '../../platform/auth/route-guard.js';
import { errorResponses } from '../../platform/error-response.js';
import { RATE_LIMIT_HEADERS } from '../../platform/http/rate-limit-headers.js';
import { NO_STORE_HEADERS, responseDoc, withHeaders } from '../../platform/http/response-docs.js';
import { WorkCost } from '../../platform/limits/work-budget.js';
import { applicationDetailWire, applicationWire, transitionWire } from './applications.reply.js';
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
const TAGS = ['Admin', 'Developer'];
const SECURITY = [{ bearerAuth: [] }];

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
      "pending -> approved. Issues the application's credential, a token for its owner with its grants, returned " +
      'once in this answer; the change and the credential commit together. A reviewer may not approve their own ' +
      'application, nor one asking for a grant only an operator gives. Limited per client address (RateLimit ' +
      'policy "address"). Grant: applications:review.',
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
      'approved -> revoked (final). Revokes its credential and every token refreshed from it: they answer 401 ' +
      'from then on. Grant: applications:review.',
  },
  withdraw: {
    operationId: 'withdrawApplication',
    summary: 'Withdraw your pending application',
    description: "pending -> withdrawn (final). The application's owner only; any valid token of theirs.",
  },
};

/**
 * Endpoint 1 (`POST /admin/developer/applications`) and the review side: list, read one, and the changes
 * of state. Issuing a credential (approval) is rate limited like /auth/refresh.
 */
export const applicationsRoutes =
  (service: ApplicationsService, rateLimitPerMinute: number): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      BASE,
      {
        // SPEC.md: a token whose owner ID cannot be read makes this a 400.
        onRequest: app.requireGrant(undefined, { noOwnerStatus: 400 }),
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
          security: SECURITY,
          body: ApplicationRequestSchema,
          response: {
            200: responseDoc(ApplicationSchema, { description: 'The application as stored, pending.' }),
            ...errorResponses(400, 401, 409, 413, 415),
          },
        },
      },
      async (request) => {
        const { name, description = '', grants, owner } = request.body;
        const principal = principalOf(request);
        return applicationWire(
          await service.apply(principal.owner, { name, description, grants, claimedOwner: owner }),
        );
      },
    );

    app.get(
      BASE,
      {
        onRequest: app.requireGrant(),
        schema: {
          tags: TAGS,
          operationId: 'listApplications',
          summary: 'List developer applications',
          description:
            'Newest first, a page at a time (`cursor` is the `next_cursor` of the page before). With the ' +
            "applications:review grant, everyone's, filtered by `state` and `owner`; otherwise your own only " +
            '(`owner`, if given, must be you).',
          security: SECURITY,
          querystring: ApplicationListQuery,
          response: {
            200: responseDoc(ApplicationListSchema),
            ...errorResponses(400, 401, 403),
          },
        },
      },
      async (request) => {
        const page = await service.list(actorOf(request), request.query);
        return { data: page.applications.map(applicationWire), next_cursor: page.nextCursor ?? null };
      },
    );

    app.get(
      `${BASE}/:id`,
      {
        onRequest: app.requireGrant(),
        schema: {
          tags: TAGS,
          operationId: 'getApplication',
          summary: 'Read one developer application',
          description:
            'The application with its history (every change: from, to, when, who, why). Its owner, or a token ' +
            'with the applications:review grant.',
          security: SECURITY,
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
      const issuesCredential = action === 'approve';
      const errors = errorResponses(400, 401, 403, 404, 409, 413, 415);
      app.post(
        `${BASE}/:id/${action}`,
        {
          onRequest: app.requireGrant(action === 'withdraw' ? undefined : 'applications:review'),
          preValidation: bodyOptional,
          ...(issuesCredential
            ? { config: { workCost: WorkCost.write, addressLimitPerMinute: rateLimitPerMinute } }
            : { config: { workCost: WorkCost.write } }),
          schema: {
            tags: TAGS,
            ...doc,
            security: SECURITY,
            params: ApplicationParams,
            body: TransitionRequestSchema,
            response: issuesCredential
              ? withHeaders(
                  {
                    200: responseDoc(ApplicationDetailSchema, {
                      description: 'The approved application, with its credential (shown once).',
                      headers: NO_STORE_HEADERS,
                    }),
                    ...errors,
                    ...errorResponses(429),
                  },
                  RATE_LIMIT_HEADERS,
                )
              : { 200: responseDoc(ApplicationDetailSchema), ...errors },
          },
        },
        async (request, reply) => {
          const result = await service.transition(
            actorOf(request),
            request.params.id,
            action,
            request.body?.reason,
          );
          // A credential in a response is kept by no cache (RFC 6749, 5.1).
          if (result.credential) reply.header('cache-control', 'no-store');
          return transitionWire(result);
        },
      );
    }
  };
