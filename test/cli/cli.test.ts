import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { promisify } from 'node:util';
import { decodeJwt } from 'jose';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { migrations } from '../../src/migrations.js';
import { cli } from '../helpers/cli.js';
import { dialects } from '../helpers/environment.js';
import { nodeArgs } from '../helpers/node-process.js';
import { eventually } from '../helpers/poll.js';
import { createTestDatabase } from '../helpers/test-database.js';
import { addWhoamiRoute, bearer } from '../helpers/tokens.js';

const SECRET = 'cli-test-secret-of-at-least-32-bytes';
// Tests run from the project's root (npm scripts do).
const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };

async function freshDatabase(t: TestContext, dialect: (typeof dialects)[number] = 'sqlite') {
  const database = await createTestDatabase(dialect);
  t.after(() => database.drop());
  return { DATABASE_URL: database.url, JWT_SECRET: SECRET };
}

describe('command line', () => {
  it('issues a token that the service accepts, and revokes it', async (t) => {
    const env = await freshDatabase(t, dialects.at(-1));
    const issued = await cli(
      env,
      ...['token', 'issue', '--owner', '18446744073709551615', '--grant', 'player:read'],
      ...['--grant', 'ping:read', '--ttl', '600'],
    );
    assert.equal(issued.code, 0, issued.stderr);
    const pair = JSON.parse(issued.stdout);
    assert.deepEqual(Object.keys(pair).sort(), ['expires_at', 'token']);
    assert.match(issued.stderr, /^issued token [0-9a-f-]{36} for owner 18446744073709551615/);
    const claims = decodeJwt(pair.token);
    assert.equal(claims.sub, '18446744073709551615');
    assert.equal(claims.scope, 'player:read ping:read');
    assert.equal(Number(claims.exp) - Number(claims.iat), 600);
    assert.equal(Date.parse(pair.expires_at), Number(claims.exp) * 1000);

    // The service, on the database the command line wrote to.
    const shared = await buildApp({ config: loadConfig({ ...env, LOG_LEVEL: 'silent' }) });
    addWhoamiRoute(shared, 'player:read');
    t.after(() => shared.close());
    const accepted = await shared.inject({ method: 'GET', url: '/test/whoami', headers: bearer(pair.token) });
    assert.equal(accepted.statusCode, 200, accepted.body);
    assert.equal(accepted.body, '{"owner":18446744073709551615,"grants":["player:read","ping:read"]}');

    const revoked = await cli(env, 'token', 'revoke', '--jti', String(claims.jti));
    assert.equal(revoked.code, 0);
    assert.deepEqual(JSON.parse(revoked.stdout), { revoked: 1 });
    // Heard at once on SQLite (the file's data version); on PostgreSQL without Redis, at the service's next
    // read of the database's change mark (every second).
    await eventually(
      'the service refuses the revoked token',
      async () =>
        (await shared.inject({ method: 'GET', url: '/test/whoami', headers: bearer(pair.token) }))
          .statusCode === 401,
    );
    const again = await cli(env, 'token', 'revoke', '--jti', String(claims.jti));
    assert.deepEqual([again.code, JSON.parse(again.stdout)], [1, { revoked: 0 }], 'nothing left to revoke');
  });

  it('revokes while the configured Redis is down: the revocation commits, a warning says so, the service hears it from the database', async (t) => {
    const env = await freshDatabase(t, dialects.at(-1));
    const issued = await cli(env, 'token', 'issue', '--owner', '42', '--grant', 'player:read');
    assert.equal(issued.code, 0, issued.stderr);
    const { token } = JSON.parse(issued.stdout);
    const shared = await buildApp({ config: loadConfig({ ...env, LOG_LEVEL: 'silent' }) });
    addWhoamiRoute(shared, 'player:read');
    t.after(() => shared.close());
    const whoami = async () =>
      (await shared.inject({ method: 'GET', url: '/test/whoami', headers: bearer(token) })).statusCode;
    assert.equal(await whoami(), 200);
    // A port nothing listens on: Redis refuses every connection.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));

    const revoked = await cli(
      { ...env, REDIS_URL: `redis://127.0.0.1:${port}` },
      ...['token', 'revoke', '--jti', String(decodeJwt(token).jti)],
    );
    assert.deepEqual([revoked.code, JSON.parse(revoked.stdout)], [0, { revoked: 1 }], revoked.stderr);
    assert.match(
      revoked.stderr,
      /^warning: Redis did not take the change \(.+\); running instances hear of it/,
    );
    assert.doesNotMatch(revoked.stderr, /\n\s+at |Unhandled/, 'no stack, no unhandled error');
    await eventually('the service refuses the revoked token', async () => (await whoami()) === 401);
  });

  it('issues an identity token with no --grant: it applies for access and follows its applications, nothing more', async (t) => {
    const env = await freshDatabase(t);
    assert.equal((await cli(env, 'migrate')).code, 0);
    const issued = await cli(env, 'token', 'issue', '--owner', '987654321987654321');
    assert.equal(issued.code, 0, issued.stderr);
    assert.match(
      issued.stderr,
      /^issued identity token [0-9a-f-]{36} for owner 987654321987654321: no grants/,
    );
    const { token } = JSON.parse(issued.stdout);
    assert.equal(decodeJwt(token).scope, '');
    const service = await buildApp({ config: loadConfig({ ...env, LOG_LEVEL: 'silent' }) });
    t.after(() => service.close());
    const applied = await service.inject({
      method: 'POST',
      url: '/admin/developer/applications',
      headers: bearer(token),
      payload: { name: 'my bot', grants: ['player:read'] },
    });
    assert.equal(applied.statusCode, 200, applied.body);
    assert.match(applied.body, /"owner":987654321987654321,/);
    const id = JSON.parse(applied.body).id as string;
    const followed = await service.inject({
      method: 'GET',
      url: `/admin/developer/applications/${id}`,
      headers: bearer(token),
    });
    assert.equal(followed.statusCode, 200);
    const data = await service.inject({ method: 'GET', url: '/ping/Notch', headers: bearer(token) });
    assert.equal(data.statusCode, 403, 'no data route');
  });

  it('lists applications and decides on them as an operator; approval prints no secret, and the key works', async (t) => {
    const env = await freshDatabase(t, dialects.at(-1));
    assert.equal((await cli(env, 'migrate')).code, 0);
    const service = await buildApp({ config: loadConfig({ ...env, LOG_LEVEL: 'silent' }) });
    addWhoamiRoute(service, 'ping:read');
    t.after(() => service.close());
    const developer = JSON.parse(
      (await cli(env, 'token', 'issue', '--owner', '18446744073709551615', '--grant', 'player:read')).stdout,
    ).token;
    const apply = async (name: string) => {
      const reply = await service.inject({
        method: 'POST',
        url: '/admin/developer/applications',
        headers: bearer(developer),
        payload: { name, grants: ['ping:read'] },
      });
      assert.equal(reply.statusCode, 200, reply.body);
      return JSON.parse(reply.body).id as string;
    };
    const first = await apply('first');
    const second = await apply('second');

    const listed = await cli(env, 'applications', 'list', '--state', 'pending');
    assert.equal(listed.code, 0, listed.stderr);
    const lines = listed.stdout.trim().split('\n');
    assert.deepEqual(
      lines.map((line) => JSON.parse(line).id),
      [second, first],
      'one JSON object per line, newest first',
    );
    assert.match(lines[0] ?? '', /"owner":18446744073709551615,/, 'the owner exact');
    assert.equal(
      (await cli(env, 'applications', 'list', '--limit', '1')).stdout.trim().split('\n').length,
      1,
    );

    const approved = await cli(env, 'applications', 'approve', first, '--reason', 'known developer');
    assert.equal(approved.code, 0, approved.stderr);
    const answer = JSON.parse(approved.stdout);
    assert.equal(answer.currentState, 'approved');
    assert.deepEqual(answer.history.at(-1), {
      from: 'pending',
      to: 'approved',
      at: answer.history.at(-1).at,
      actor: 'operator',
      reason: 'known developer',
    });
    assert.doesNotMatch(
      `${approved.stdout}${approved.stderr}`,
      /pds_|eyJ|"token"/,
      'no key and no token printed',
    );
    assert.match(approved.stderr, /collects its key/);
    assert.equal(answer.key.state, 'uncollected');
    const identity = JSON.parse(
      (await cli(env, 'token', 'issue', '--owner', '18446744073709551615')).stdout,
    ).token;
    const collected = await service.inject({
      method: 'POST',
      url: `/admin/developer/applications/${first}/key`,
      headers: bearer(identity),
    });
    assert.equal(collected.statusCode, 200, collected.body);
    const exchanged = await service.inject({
      method: 'POST',
      url: '/auth/token',
      payload: { key: JSON.parse(collected.body).key },
    });
    const token = JSON.parse(exchanged.body).token as string;
    const whoami = (auth: string) =>
      service.inject({ method: 'GET', url: '/test/whoami', headers: bearer(auth) });
    assert.equal((await whoami(token)).statusCode, 200);

    assert.equal((await cli(env, 'applications', 'revoke', first)).code, 0);
    await eventually(
      'revoking ends the key and its tokens',
      async () => (await whoami(token)).statusCode === 401,
    );
    const refused = await cli(env, 'applications', 'approve', first);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /the application is revoked, a final state/);
    const unknown = await cli(env, 'applications', 'reject', '00000000-0000-4000-8000-000000000000');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /there is no application 00000000-0000-4000-8000-000000000000/);
    const rejected = await cli(env, 'applications', 'reject', second);
    assert.equal(rejected.code, 0, rejected.stderr);
    assert.equal(JSON.parse(rejected.stdout).credential, undefined);
  });

  it('migrates a database and says what it applied', async (t) => {
    const env = await freshDatabase(t);
    const first = await cli(env, 'migrate');
    assert.equal(first.code, 0, first.stderr);
    assert.deepEqual(JSON.parse(first.stdout), { applied: Object.keys(migrations) });
    assert.deepEqual(JSON.parse((await cli(env, 'migrate')).stdout), { applied: [] });
  });

  it('prints its usage on stdout for help, --help and -h, and its version for --version', async () => {
    for (const args of [['help'], ['--help'], ['-h'], ['token', 'issue', '--help']]) {
      const { code, stdout, stderr } = await cli({}, ...args);
      assert.equal(code, 0, args.join(' '));
      assert.match(stdout, /^Usage: node dist\/cli.js <command>/);
      assert.match(stdout, /token issue --owner <id> \[--grant <grant> \.\.\.\]/);
      assert.equal(stderr, '');
    }
    assert.deepEqual(await cli({}, '--version'), { code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it('explains a wrong command line on stderr with exit code 2, and touches nothing', async () => {
    for (const args of [
      [],
      ['nonsense'],
      ['toString'],
      ['migrate', 'now'],
      ['token'],
      ['token', 'issue', '--owner', 'abc', '--grant', 'player:read'],
      ['token', 'issue', '--owner', '1', '--grant', 'root'],
      ['token', 'issue'],
      ['token', 'issue', '--owner', '1', '--grant', 'player:read', '--ttl', '59'],
      ['token', 'issue', '--owner', '18446744073709551616', '--grant', 'player:read'],
      ['token', 'issue', '--owner', '1', '--grant', 'player:read', '--colour'],
      ['token', 'revoke'],
      ['applications'],
      ['applications', 'approve'],
      ['applications', 'approve', 'not-an-id'],
      ['applications', 'withdraw', '00000000-0000-4000-8000-000000000000'],
      ['applications', 'list', '--state', 'lost'],
      ['applications', 'list', '--owner', 'abc'],
      ['applications', 'list', '--limit', '0'],
      ['applications', 'list', '--reason', 'x'],
      ['applications', 'reject', '00000000-0000-4000-8000-000000000000', '--reason', 'a\u0000b'],
      ['applications', 'reject', '00000000-0000-4000-8000-000000000000', '--state', 'pending'],
      ['applications', 'reject', '00000000-0000-4000-8000-000000000000', '--reason', 'a\u0085'],
    ]) {
      // A configuration that does not load: a command that got as far as reading it would exit 1, not 2.
      const { code, stdout, stderr } = await cli({ DATABASE_URL: 'mysql://x' }, ...args);
      assert.equal(code, 2, `${args.join(' ')}: ${stderr}`);
      assert.equal(stdout, '');
      assert.match(stderr, /\n\nUsage: node dist\/cli.js/);
    }
  });

  it('names a bad configuration and exits 1', async () => {
    const { code, stderr } = await cli({ DATABASE_URL: 'mysql://x' }, 'migrate');
    assert.equal(code, 1);
    assert.match(stderr, /^Invalid configuration:\n {2}- DATABASE_URL must be sqlite:<path> or postgres/);
  });

  it('runs as a process: reads the environment, writes stdout, exits 0 (smoke test of src/cli.ts)', async (t) => {
    const env = await freshDatabase(t);
    const { stdout } = await promisify(execFile)(process.execPath, [...nodeArgs('src/cli.ts'), 'migrate'], {
      env: { ...process.env, ...env },
    });
    assert.deepEqual(JSON.parse(stdout), { applied: Object.keys(migrations) });
  });
});
