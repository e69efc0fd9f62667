import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { runCli } from '../../src/cli/run-cli.js';
import { type Config, loadConfig } from '../../src/config.js';
import { createTokensService, type TokensService } from '../../src/modules/tokens/tokens.service.js';
import { GRANTS, type Grant } from '../../src/platform/auth/grants.js';
import { principalOf } from '../../src/platform/auth/route-guard.js';
import { createTokenCodec } from '../../src/platform/auth/token-codec.js';
import { createDatabase, type Database } from '../../src/platform/db/database.js';
import { executorOf } from '../../src/platform/db/transactions.js';
import { SnowflakeOut } from '../../src/platform/snowflake.js';
import { type Closer, deferClose, TEST_JWT_SECRET } from './build-test-app.js';

/**
 * A tokens service over the app's database, with a clock of the test's choosing: for issuing tokens, and for
 * what it changes in the database (the app keeps token records in process: a revocation it must see goes
 * through `revokeFromCommandLine`, as an operator's would).
 */
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

/**
 * A tokens service on the database of service processes (startServiceProcess, which sign with
 * TEST_JWT_SECRET), on a connection of its own closed when `t` ends: for issuing the tokens an operator
 * would issue with the command line, to processes the test has no app of.
 */
export function tokensOnDatabase(t: Closer, databaseUrl: string): TokensService {
  const db = createDatabase(loadConfig({ DATABASE_URL: databaseUrl, JWT_SECRET: TEST_JWT_SECRET }).database);
  deferClose(t, () => db.destroy());
  return processTokens(db);
}

/** A tokens service on `db` for service processes (which sign with TEST_JWT_SECRET), as the command line issues. */
export function processTokens(db: Database): TokensService {
  const { auth } = loadConfig({ JWT_SECRET: TEST_JWT_SECRET, DATA_DIR: '/nonexistent-unused' });
  return createTokensService({
    db: executorOf(db),
    codec: createTokenCodec(TEST_JWT_SECRET, auth),
    settings: auth,
  });
}

/**
 * Every grant but `messenger:audit`: what the tests' tokens carry unless they say, so that each reads its own
 * owner's data as a developer's token does (an auditor reads everyone's).
 */
export const TEST_GRANTS: readonly Grant[] = GRANTS.filter((grant) => grant !== 'messenger:audit');

/** A token with the given grants (TEST_GRANTS by default), for an owner. */
export async function issueToken(
  app: FastifyInstance,
  config: Config,
  { owner = 123456789012345678n, grants = TEST_GRANTS }: { owner?: bigint; grants?: readonly Grant[] } = {},
): Promise<string> {
  return (await testTokens(app, config).issue(owner, grants)).token;
}

/** GET /test/whoami: guarded by `grant`, answers who the caller is. Register before the app is ready. */
export function addWhoamiRoute(app: FastifyInstance, grant?: Grant): void {
  app.get(
    '/test/whoami',
    {
      onRequest: app.requireGrant(grant),
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

/**
 * Revokes a token's chain as an operator does, with the command line (in this process, on a connection of
 * its own), configured as the app is: through Redis too when the app uses it, unless `withoutRedis`.
 * How many tokens it revoked.
 */
export async function revokeFromCommandLine(
  test: { readonly config: Config; readonly databaseUrl: string },
  jti: string,
  { withoutRedis = false }: { withoutRedis?: boolean } = {},
): Promise<number> {
  let stdout = '';
  const code = await runCli(['token', 'revoke', '--jti', jti], {
    stdout: (text) => {
      stdout += text;
    },
    stderr: () => undefined,
    env: {
      DATABASE_URL: test.databaseUrl,
      JWT_SECRET: String(test.config.auth.jwtSecret),
      REDIS_KEY_PREFIX: test.config.redisKeyPrefix,
      ...(test.config.redisUrl && !withoutRedis ? { REDIS_URL: test.config.redisUrl } : {}),
    },
  });
  if (code !== 0 && code !== 1) throw new Error(`token revoke exited with ${code}`);
  return (JSON.parse(stdout) as { revoked: number }).revoked;
}

/** A token's id (`jti`), read from it. */
export const jtiOf = (token: string): string =>
  JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()).jti;
