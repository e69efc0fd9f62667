import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Config } from '../../src/config.js';
import { createTokensService, type TokensService } from '../../src/modules/tokens/tokens.service.js';
import { GRANTS, type Grant } from '../../src/platform/auth/grants.js';
import { principalOf } from '../../src/platform/auth/route-guard.js';
import { createTokenCodec } from '../../src/platform/auth/token-codec.js';
import { executorOf } from '../../src/platform/db/transactions.js';
import { SnowflakeOut } from '../../src/platform/snowflake.js';

/** The app's own tokens service over its database, with a clock of the test's choosing. */
export function testTokens(
  app: FastifyInstance,
  config: Config,
  now: () => number = Date.now,
): TokensService {
  return createTokensService({
    db: executorOf(app.db),
    codec: createTokenCodec(String(config.auth.jwtSecret), config.auth),
    settings: config.auth,
    now,
  });
}

/** A token with the given grants (all by default), for an owner. */
export async function issueToken(
  app: FastifyInstance,
  config: Config,
  { owner = 123456789012345678n, grants = [...GRANTS] }: { owner?: bigint; grants?: readonly Grant[] } = {},
): Promise<string> {
  return (await testTokens(app, config).issue(owner, grants)).token;
}

/** GET /test/whoami: guarded by `grant`, answers who the caller is. Register before the app is ready. */
export function addWhoamiRoute(app: FastifyInstance, grant?: Grant): void {
  app.get(
    '/test/whoami',
    {
      preHandler: app.requireGrant(grant),
      schema: {
        response: { 200: Type.Object({ owner: SnowflakeOut(), grants: Type.Array(Type.String()) }) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      return { owner: principal.owner, grants: [...principal.grants] };
    },
  );
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
