import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Config } from '../../../src/config.js';
import { principalOf } from '../../../src/platform/auth/route-guard.js';
import { PlayerParams, SnowflakeParams } from '../../../src/platform/http/path-params.js';
import { parsePlayerRef } from '../../../src/platform/player-id.js';
import { parseSnowflakeParam, SnowflakeOut } from '../../../src/platform/snowflake.js';
import { buildTestApp, suiteScope } from '../../helpers/build-test-app.js';
import { bearer, issueToken } from '../../helpers/tokens.js';

const OWNER = 123456789012345678n;

describe('request helpers', () => {
  const scope = suiteScope();
  let app: FastifyInstance;
  let config: Config;
  before(async () => {
    ({ app, config } = await buildTestApp(scope));
    const typed = app.withTypeProvider<TypeBoxTypeProvider>();
    typed.get(
      '/test/users/:snowflake',
      {
        preHandler: app.requireOwnerOrGrant('messenger:write', 'snowflake'),
        schema: {
          params: SnowflakeParams,
          response: { 200: Type.Object({ snowflake: SnowflakeOut(), caller: SnowflakeOut() }) },
        },
      },
      async (request) => ({ snowflake: request.params.snowflake, caller: principalOf(request).owner }),
    );
    typed.get('/test/players/:player', { schema: { params: PlayerParams } }, async (request) =>
      parsePlayerRef(request.params.player),
    );
    app.get('/test/unguarded', async (request) => ({ owner: String(principalOf(request).owner) }));
    // A guard on a parameter the route does not declare as a snowflake: a bug of the route, not a 403.
    app.get(
      '/test/misdeclared/:owner',
      { preHandler: app.requireOwnerOrGrant('messenger:write', 'owner') },
      async () => ({}),
    );
  });

  const getUser = async (snowflake: string, token?: string) =>
    app.inject({ method: 'GET', url: `/test/users/${snowflake}`, headers: token ? bearer(token) : {} });
  const problemName = (reply: { json(): { extra: { name: string }[] } }) => reply.json().extra[0]?.name;

  it('lets the owner of a resource in, and a holder of the grant; 403 for anyone else, 401 without a token', async () => {
    const own = await issueToken(app, config, { owner: OWNER, grants: ['player:read'] });
    const other = await issueToken(app, config, { owner: 7n, grants: ['player:read'] });
    const reviewer = await issueToken(app, config, { owner: 7n, grants: ['messenger:write'] });
    const mine = await getUser(String(OWNER), own);
    assert.equal(mine.statusCode, 200, mine.body);
    assert.equal(mine.body, `{"snowflake":${OWNER},"caller":${OWNER}}`);
    assert.equal((await getUser(String(OWNER), reviewer)).statusCode, 200);
    const forbidden = await getUser(String(OWNER), other);
    assert.equal(forbidden.statusCode, 403);
    assert.equal(problemName(forbidden), 'NOT_RESOURCE_OWNER');
    assert.match(String(forbidden.headers['www-authenticate']), /insufficient_scope/);
    const anonymous = await getUser(String(OWNER));
    assert.equal(anonymous.statusCode, 401);
    assert.equal(problemName(anonymous), 'TOKEN_MISSING');
  });

  it('takes a {snowflake} of 17 to 20 digits up to 2^64-1, exact, and refuses anything else with a 400', async () => {
    const reviewer = await issueToken(app, config, { grants: ['messenger:write'] });
    for (const id of ['10000000000000000', '18446744073709551615']) {
      const reply = await getUser(id, reviewer);
      assert.equal(reply.statusCode, 200, `${id}: ${reply.body}`);
      assert.match(reply.body, new RegExp(`^\\{"snowflake":${id},`));
    }
    for (const id of [
      '1234567890123456',
      '123456789012345678901',
      '18446744073709551616',
      '99999999999999999999',
      '12345678901234567a',
      '-12345678901234567',
      '1.2345678901234567',
    ]) {
      const reply = await getUser(encodeURIComponent(id), reviewer);
      assert.equal(reply.statusCode, 400, `${id}: ${reply.body}`);
      assert.equal(problemName(reply), 'INVALID_FIELD');
      assert.match(reply.json().extra[0].reason, /^snowflake must be a Discord ID/);
    }
    assert.equal(parseSnowflakeParam('18446744073709551615'), 18446744073709551615n);
    assert.equal(parseSnowflakeParam('18446744073709551616'), undefined);
    assert.equal(parseSnowflakeParam('123'), undefined);
  });

  it('takes a {player} as a UUID (normalised) or a username (as given), and refuses anything else', async () => {
    const get = (player: string) => app.inject({ method: 'GET', url: `/test/players/${player}` });
    assert.deepEqual((await get('20934EF9-488C-4651-80A7-8F861586B4CF')).json(), {
      uuid: '20934ef9488c465180a78f861586b4cf',
    });
    assert.deepEqual((await get('Mini_Kloon')).json(), { username: 'Mini_Kloon' });
    for (const bad of ['bad!name', 'a_name_far_too_long', '20934ef9-488c-4651-80a78f861586b4cf']) {
      const reply = await get(encodeURIComponent(bad));
      assert.equal(reply.statusCode, 400, bad);
      assert.match(reply.json().extra[0].reason, /^player must be a Minecraft UUID/);
    }
  });

  it('answers 500 (with nothing internal) for a route that reads a principal without a guard, or guards a non-snowflake', async () => {
    const reply = await app.inject({ method: 'GET', url: '/test/unguarded' });
    assert.equal(reply.statusCode, 500);
    assert.equal(problemName(reply), 'INTERNAL_ERROR');
    assert.doesNotMatch(reply.body, /guard|unguarded/);
    const own = await issueToken(app, config, { owner: OWNER, grants: ['player:read'] });
    const misdeclared = await app.inject({
      method: 'GET',
      url: `/test/misdeclared/${OWNER}`,
      headers: bearer(own),
    });
    assert.equal(misdeclared.statusCode, 500);
    assert.equal(problemName(misdeclared), 'INTERNAL_ERROR');
    assert.doesNotMatch(misdeclared.body, /snowflake|misdeclared/);
  });
});
