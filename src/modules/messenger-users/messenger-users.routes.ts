import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../platform/auth/route-guard.js';
import { errorResponses } from '../../platform/error-response.js';
import { SnowflakeParams } from '../../platform/http/path-params.js';
import { responseDoc } from '../../platform/http/response-docs.js';
import { parsePlayerRef } from '../../platform/player-id.js';
import { asUpstreamError } from '../../upstream/upstream-result.js';
import {
  AccountParams,
  LinkRequestSchema,
  LocaleRequestSchema,
  UserProfileResultSchema,
} from './messenger-users.schemas.js';
import type { MessengerUserProfile, MessengerUsersService } from './messenger-users.service.js';

const PROFILE = '/messenger/user/:snowflake/profile';
const ACCOUNTS = '/messenger/user/:snowflake/accounts';
const TAGS = ['Messenger'];
const security = [{ bearerAuth: [] }];
const profileResponse = responseDoc(UserProfileResultSchema);

/** Endpoint 7 and the writes beside it: a Discord user's locale and linked Minecraft accounts. */
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
          description: 'The primary account first, then in link order. Grant: messenger:read.',
          security,
          params: SnowflakeParams,
          response: { 200: profileResponse, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (request) => profileWire(await service.profile(request.params.snowflake)),
    );

    app.put(
      PROFILE,
      {
        onRequest: app.requireGrant('messenger:write'),
        schema: {
          tags: TAGS,
          operationId: 'setMessengerUserLocale',
          summary: "Set a Discord user's locale",
          description:
            'A BCP 47 language tag, kept in canonical form; creates the user when new. Grant: messenger:write.',
          security,
          params: SnowflakeParams,
          body: LocaleRequestSchema,
          response: { 200: profileResponse, ...errorResponses(400, 401, 403, 413, 415) },
        },
      },
      async (request) => profileWire(await service.setLocale(request.params.snowflake, request.body.locale)),
    );

    app.post(
      ACCOUNTS,
      {
        onRequest: app.requireGrant('messenger:write'),
        schema: {
          tags: TAGS,
          operationId: 'linkMinecraftAccount',
          summary: 'Link a Minecraft account to a Discord user',
          description:
            'By UUID or username (resolved through the cache and the upstream budget); creates the user when new. ' +
            'The first account linked is primary. 409 when another user has the account, when the user has ' +
            'MESSENGER_MAX_LINKED_ACCOUNTS already, or when verification fails; upstream trouble during ' +
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
        const caller = String(principalOf(request).owner);
        const linked = await service
          .link(request.params.snowflake, request.body, caller)
          .catch(asUpstreamError);
        return profileWire(linked);
      },
    );

    app.delete(
      `${ACCOUNTS}/:uuid`,
      {
        onRequest: app.requireGrant('messenger:write'),
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
        profileWire(await service.unlink(request.params.snowflake, uuidOf(request.params.uuid))),
    );

    app.put(
      `${ACCOUNTS}/:uuid/primary`,
      {
        onRequest: app.requireGrant('messenger:write'),
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
        profileWire(await service.makePrimary(request.params.snowflake, uuidOf(request.params.uuid))),
    );
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
