import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { principalOf } from '../../platform/auth/route-guard.js';
import { errorResponses } from '../../platform/error-response.js';
import { inBody } from '../../platform/http/input-errors.js';
import { failureAsError } from '../../platform/http/lookup-result.js';
import { SnowflakeParams } from '../../platform/http/path-params.js';
import { responseDoc } from '../../platform/http/response-docs.js';
import { WorkCost } from '../../platform/limits/work-budget.js';
import { parsePlayerRef } from '../../platform/player-id.js';
import { upstreamFailureOf } from '../../upstream/upstream-failure.js';
import {
  AccountParams,
  LinkRequestSchema,
  LocaleRequestSchema,
  ProfileQuery,
  UserProfileResultSchema,
} from './messenger-users.schemas.js';
import {
  AUDIT_GRANT,
  type MessengerUserProfile,
  type MessengerUsersService,
  type Reader,
} from './messenger-users.service.js';

const PROFILE = '/messenger/user/:snowflake/profile';
const ACCOUNTS = '/messenger/user/:snowflake/accounts';
const TAGS = ['Messenger'];
const security = [{ bearerAuth: [] }];
const profileResponse = responseDoc(UserProfileResultSchema);
/** An upstream failure met linking an account, as an ErrorResponse with the status endpoint 5 would answer. */
const asUpstreamError = failureAsError(upstreamFailureOf);

/**
 * Endpoint 7 and the writes beside it: a Discord user's locale and linked Minecraft accounts, in the calling
 * owner's view (each owner's bot has its own).
 */
export const messengerUsersRoutes =
  (service: MessengerUsersService): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      PROFILE,
      {
        onRequest: app.requireGrant('messenger:read'),
        schema: {
          tags: TAGS,
          operationId: 'getMessengerUserProfile',
          summary: "Get a Discord user's profile and linked Minecraft accounts",
          description:
            "The user in the caller's view (its owner's): a user it has logged or written is known (the locale " +
            'en-US until set, no accounts until it links one); any other is 404, whatever other owners know. ' +
            'The primary account first, then in link order. With the messenger:audit grant, `owner` reads that ' +
            "owner's view; without it, naming another owner is a 403 NOT_RESOURCE_OWNER. Grant: messenger:read.",
          security,
          params: SnowflakeParams,
          querystring: ProfileQuery,
          response: { 200: profileResponse, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (request) => {
        const { owner } = request.query;
        const asked = owner === undefined ? undefined : BigInt(owner);
        return profileWire(await service.profile(readerOf(request), request.params.snowflake, asked));
      },
    );

    app.put(
      PROFILE,
      {
        onRequest: app.requireGrant('messenger:write'),
        config: { workCost: WorkCost.write },
        schema: {
          tags: TAGS,
          operationId: 'setMessengerUserLocale',
          summary: "Set a Discord user's locale",
          description:
            "A BCP 47 language tag, kept in canonical form; creates the user in the caller's view when new. " +
            'Grant: messenger:write.',
          security,
          params: SnowflakeParams,
          body: LocaleRequestSchema,
          response: { 200: profileResponse, ...errorResponses(400, 401, 403, 413, 415) },
        },
      },
      async (request) =>
        profileWire(
          await service
            .setLocale(principalOf(request).owner, request.params.snowflake, request.body.locale)
            .catch(inBody),
        ),
    );

    app.post(
      ACCOUNTS,
      {
        onRequest: app.requireGrant('messenger:write'),
        config: { workCost: WorkCost.write },
        schema: {
          tags: TAGS,
          operationId: 'linkMinecraftAccount',
          summary: 'Link a Minecraft account to a Discord user',
          description:
            'By UUID or username (resolved through the cache and the upstream budget); creates the user in the ' +
            "caller's view when new. The first account linked is primary. 409 when another user of the caller's " +
            'view has the account, when the user has MESSENGER_MAX_LINKED_ACCOUNTS already, or when verification ' +
            "fails (against the username the caller's own logs last gave the user); upstream trouble during " +
            'resolution or verification answers 429/502/503/504 as /gamemode/profiles does, and links nothing. ' +
            'Grant: messenger:write.',
          security,
          params: SnowflakeParams,
          body: LinkRequestSchema,
          response: {
            200: profileResponse,
            ...errorResponses(400, 401, 403, 404, 409, 413, 415, 429, 502, 504),
          },
        },
      },
      async (request) => {
        const linked = await service
          .link(principalOf(request).owner, request.params.snowflake, request.body)
          .catch(asUpstreamError);
        return profileWire(linked);
      },
    );

    app.delete(
      `${ACCOUNTS}/:uuid`,
      {
        onRequest: app.requireGrant('messenger:write'),
        config: { workCost: WorkCost.write },
        schema: {
          tags: TAGS,
          operationId: 'unlinkMinecraftAccount',
          summary: 'Unlink a Minecraft account from a Discord user',
          description:
            'When it was the primary, the oldest remaining account becomes primary. Grant: messenger:write.',
          security,
          params: AccountParams,
          response: { 200: profileResponse, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (request) =>
        profileWire(
          await service.unlink(
            principalOf(request).owner,
            request.params.snowflake,
            uuidOf(request.params.uuid),
          ),
        ),
    );

    app.put(
      `${ACCOUNTS}/:uuid/primary`,
      {
        onRequest: app.requireGrant('messenger:write'),
        config: { workCost: WorkCost.write },
        schema: {
          tags: TAGS,
          operationId: 'setPrimaryMinecraftAccount',
          summary: "Make a linked Minecraft account the user's primary",
          description: 'Grant: messenger:write.',
          security,
          params: AccountParams,
          response: { 200: profileResponse, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (request) =>
        profileWire(
          await service.makePrimary(
            principalOf(request).owner,
            request.params.snowflake,
            uuidOf(request.params.uuid),
          ),
        ),
    );
  };

/** The caller as a reader of users: its owner, and whether it may read every owner's view. */
const readerOf = (request: FastifyRequest): Reader => {
  const principal = principalOf(request);
  return { owner: principal.owner, auditor: principal.grants.has(AUDIT_GRANT) };
};

/** The schema took only UUIDs: undashed lowercase. */
const uuidOf = (text: string): string => {
  const ref = parsePlayerRef(text);
  return ref && 'uuid' in ref ? ref.uuid : text.toLowerCase();
};

function profileWire(profile: MessengerUserProfile) {
  return {
    user_profile: { snowflake: profile.snowflake.toString(), locale: profile.locale },
    linked_accounts: profile.accounts.map((account) => ({
      id: account.uuid,
      snowflake: account.snowflake.toString(),
      is_primary: account.primary,
    })),
  };
}
