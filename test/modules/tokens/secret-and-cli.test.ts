import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { decodeJwt } from 'jose';
import { buildApp } from '../../../src/app.js';
import { ConfigError, loadConfig } from '../../../src/config.js';
import { migrations } from '../../../src/platform/db/migrations/index.js';
import { resolveJwtSecret } from '../../../src/platform/jwt-secret.js';
import { buildTestApp } from '../../helpers/build-test-app.js';
import { dialects, testRedisUrl } from '../../helpers/environment.js';
import { createTestDatabase } from '../../helpers/test-database.js';
import { addWhoamiRoute, bearer } from '../../helpers/tokens.js';

const run = promisify(execFile);

describe('JWT secret', () => {
  it('refuses a secret shorter than 32 bytes, without echoing it', () => {
    assert.throws(
      () => loadConfig({ JWT_SECRET: 'short-secret-value' }),
      (error: unknown) =>
        error instanceof ConfigError &&
        /JWT_SECRET must be at least 32 bytes/.test(error.message) &&
        !error.message.includes('short-secret-value'),
    );
  });

  it('is required in production', () => {
    assert.throws(
      () => loadConfig({ NODE_ENV: 'production' }),
      /JWT_SECRET is required when NODE_ENV=production/,
    );
    assert.equal(
      loadConfig({ NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32) }).auth.jwtSecret,
      'x'.repeat(32),
    );
  });

  it('outside production without JWT_SECRET, is generated once into the data dir with mode 0600 and kept', async (t) => {
    const dataDir = await mkdtemp(join(tmpdir(), 'pds-secret-'));
    t.after(() => rm(dataDir, { recursive: true, force: true }));
    const config = loadConfig({ DATA_DIR: dataDir });
    const first = await resolveJwtSecret(config);
    assert.ok(Buffer.byteLength(first) >= 32);
    assert.equal((await stat(join(dataDir, 'jwt-secret'))).mode & 0o777, 0o600);
    assert.equal(await resolveJwtSecret(config), first, 'a restart reads the same secret');
  });
});

describe('token command line', () => {
  it('issues a token that the service accepts, and revokes it', async (t) => {
    const database = await createTestDatabase(dialects.at(-1) ?? 'sqlite');
    t.after(() => database.drop());
    const env = {
      ...process.env,
      DATABASE_URL: database.url,
      JWT_SECRET: 'cli-test-secret-of-at-least-32-bytes',
    };
    const cli = (...args: string[]) =>
      run(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { env });

    const issued = await cli(
      'token',
      'issue',
      '--owner',
      '18446744073709551615',
      '--grant',
      'player:read',
      '--grant',
      'ping:read',
      '--ttl',
      '600',
    );
    const pair = JSON.parse(issued.stdout);
    assert.deepEqual(Object.keys(pair).sort(), ['expires_at', 'token']);
    const claims = decodeJwt(pair.token);
    assert.equal(claims.sub, '18446744073709551615');
    assert.equal(claims.scope, 'player:read ping:read');
    assert.equal(Number(claims.exp) - Number(claims.iat), 600);
    assert.equal(Date.parse(pair.expires_at), Number(claims.exp) * 1000);

    // The service, on the database the command line wrote to.
    const shared = await buildApp({
      config: loadConfig({
        DATABASE_URL: database.url,
        JWT_SECRET: 'cli-test-secret-of-at-least-32-bytes',
        LOG_LEVEL: 'silent',
      }),
    });
    addWhoamiRoute(shared, 'player:read');
    t.after(() => shared.close());
    const accepted = await shared.inject({ method: 'GET', url: '/test/whoami', headers: bearer(pair.token) });
    assert.equal(accepted.statusCode, 200, accepted.body);
    assert.equal(accepted.body, '{"owner":18446744073709551615,"grants":["player:read","ping:read"]}');

    const revoked = await cli('token', 'revoke', '--jti', String(claims.jti));
    assert.deepEqual(JSON.parse(revoked.stdout), { revoked: 1 });
    assert.equal(
      (await shared.inject({ method: 'GET', url: '/test/whoami', headers: bearer(pair.token) })).statusCode,
      401,
    );
  });

  it('migrates a database and says what it applied', async (t) => {
    const database = await createTestDatabase('sqlite');
    t.after(() => database.drop());
    const migrate = () =>
      run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'migrate'], {
        env: { ...process.env, DATABASE_URL: database.url },
      });
    assert.deepEqual(JSON.parse((await migrate()).stdout), { applied: Object.keys(migrations) });
    assert.deepEqual(JSON.parse((await migrate()).stdout), { applied: [] });
  });

  it('explains bad arguments with exit code 2', async () => {
    for (const args of [
      ['token', 'issue', '--owner', 'abc', '--grant', 'player:read'],
      ['token', 'issue', '--owner', '1', '--grant', 'root'],
      ['nonsense'],
    ]) {
      await assert.rejects(
        run(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args]),
        (error: { code: number; stderr: string }) => {
          assert.equal(error.code, 2);
          assert.match(error.stderr, /Usage: node dist\/cli.js/);
          return true;
        },
      );
    }
  });
});

describe('rate limits shared through Redis', {
  skip: testRedisUrl ? false : 'TEST_REDIS_URL is not set',
}, () => {
  it('counts one budget for two instances', async (t) => {
    const env = { RATE_LIMIT_AUTH_PER_MINUTE: '4' };
    const first = await buildTestApp({ redis: true, env });
    const second = await buildTestApp({ redis: true, env, redisKeyPrefix: first.config.redisKeyPrefix });
    t.after(async () => {
      await first.app.close();
      await second.app.close();
    });
    const address = `10.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.7`;
    const refresh = (app: typeof first.app) =>
      app.inject({
        method: 'POST',
        url: '/auth/refresh',
        payload: { token: 'x.y.z' },
        remoteAddress: address,
      });
    const statuses = [];
    for (const app of [first.app, second.app, first.app, second.app, first.app, second.app])
      statuses.push((await refresh(app)).statusCode);
    assert.deepEqual(statuses, [401, 401, 401, 401, 429, 429]);
  });
});
