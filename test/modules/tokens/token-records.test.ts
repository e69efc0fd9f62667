import assert from 'node:assert/strict';
import { it, type TestContext } from 'node:test';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { TOKEN_CHANGES_CHECK_MS } from '../../../src/modules/tokens/tokens.service.js';
import { type Backend, describeEachBackend } from '../../helpers/backends.js';
import { buildTestApp, type TestApp } from '../../helpers/build-test-app.js';
import { testRedisUrl } from '../../helpers/environment.js';
import { startTcpProxy, throughProxy } from '../../helpers/tcp-proxy.js';
import { addWhoamiRoute, bearer, issueToken, jtiOf, revokeFromCommandLine } from '../../helpers/tokens.js';

/** Two instances of the service on one database (and one Redis key space, when the backend has Redis). */
async function twoInstances(t: TestContext, backend: Backend) {
  const first = await buildTestApp(t, { backend });
  const second = await buildTestApp(t, {
    backend,
    databaseUrl: first.databaseUrl,
    redisKeyPrefix: first.config.redisKeyPrefix,
  });
  for (const { app } of [first, second]) addWhoamiRoute(app, 'player:read');
  const whoami = ({ app }: TestApp, token: string) =>
    app.inject({ method: 'GET', url: '/test/whoami', headers: bearer(token) });
  // With Redis, records are kept once each instance's subscription stands.
  if (backend.cache === 'redis')
    for (const test of [first, second])
      assert.notEqual(await within(5000, async () => subscriptions(test) > 0), undefined, 'subscribed');
  return { first, second, whoami };
}

/** An instance that reaches Redis through a TCP proxy the test can freeze. */
async function instanceBehindRedisProxy(t: TestContext, backend: Backend) {
  const redisUrl = new URL(String(testRedisUrl));
  const proxy = await startTcpProxy({ host: redisUrl.hostname, port: Number(redisUrl.port || 6379) });
  t.after(() => proxy.close());
  const test = await buildTestApp(t, {
    backend,
    // Reuse revokes at once (no grace): the test below revokes a chain by presenting a token again.
    env: { REDIS_URL: throughProxy(String(testRedisUrl), proxy), TOKEN_REFRESH_GRACE_SECONDS: '0' },
  });
  return { test, proxy };
}

const subscriptions = (test: TestApp) =>
  test.logs.lines.filter((line) => line.msg === 'invalidation feed subscribed').length;

/** Waits for `condition`, checking every few ms, for at most `withinMs`; how long it took, or undefined. */
async function within(withinMs: number, condition: () => Promise<boolean>): Promise<number | undefined> {
  const started = performance.now();
  while (performance.now() - started <= withinMs) {
    if (await condition()) return performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  return undefined;
}

/**
 * How soon an instance hears of a revocation made by another process: at once where something tells it
 * (Redis's feed; on SQLite, the file's data version, asked every 10 ms), and on PostgreSQL without Redis
 * at its next read of the database's change mark (every second). The bound is the test's: it shows which
 * way the revocation came, not how fast a loaded machine is.
 */
const heardWithinMs = (backend: Backend) =>
  backend.dialect === 'postgres' && backend.cache === 'memory' ? TOKEN_CHANGES_CHECK_MS + 500 : 100;

describeEachBackend(
  'token records kept in process',
  (backend) => {
    it(`sees a revocation by another process (the command line) within ${heardWithinMs(backend)} ms`, async (t) => {
      const { first, whoami } = await twoInstances(t, backend);
      const token = await issueToken(first.app, first.config, { grants: ['player:read'] });
      for (let request = 0; request < 3; request++)
        assert.equal((await whoami(first, token)).statusCode, 200);
      assert.equal(await revokeFromCommandLine(first, jtiOf(token)), 1);
      const seen = await within(
        heardWithinMs(backend),
        async () => (await whoami(first, token)).statusCode === 401,
      );
      assert.notEqual(
        seen,
        undefined,
        `the revoked token still opens the route ${heardWithinMs(backend)} ms later`,
      );
    });

    it(`sees a revocation made by another instance within ${heardWithinMs(backend)} ms`, async (t) => {
      const { first, second, whoami } = await twoInstances(t, backend);
      const reviewer = await issueToken(first.app, first.config, {
        owner: 1n,
        grants: ['applications:review'],
      });
      const applicant = await issueToken(first.app, first.config, { owner: 2n, grants: [] });
      const created = await first.app.inject({
        method: 'POST',
        url: '/admin/developer/applications',
        headers: bearer(applicant),
        payload: { name: 'bot', description: '', grants: ['player:read'] },
      });
      assert.equal(created.statusCode, 200, created.body);
      const { id } = created.json();
      const approved = await first.app.inject({
        method: 'POST',
        url: `/admin/developer/applications/${id}/approve`,
        headers: bearer(reviewer),
        payload: {},
      });
      assert.equal(approved.statusCode, 200, approved.body);
      // The developer collects the key on the first instance and exchanges it on the second.
      const collected = await first.app.inject({
        method: 'POST',
        url: `/admin/developer/applications/${id}/key`,
        headers: bearer(applicant),
      });
      assert.equal(collected.statusCode, 200, collected.body);
      const exchanged = await second.app.inject({
        method: 'POST',
        url: '/auth/token',
        payload: { key: collected.json().key },
      });
      assert.equal(exchanged.statusCode, 200, exchanged.body);
      const credential = exchanged.json().token as string;
      // The second instance has the credential's record in hand.
      for (let request = 0; request < 3; request++)
        assert.equal((await whoami(second, credential)).statusCode, 200);
      const revoked = await first.app.inject({
        method: 'POST',
        url: `/admin/developer/applications/${id}/revoke`,
        headers: bearer(reviewer),
        payload: { reason: 'abuse' },
      });
      assert.equal(revoked.statusCode, 200, revoked.body);
      const seen = await within(
        heardWithinMs(backend),
        async () => (await whoami(second, credential)).statusCode === 401,
      );
      assert.notEqual(
        seen,
        undefined,
        `the second instance still honours the revoked credential after ${heardWithinMs(backend)} ms`,
      );
      t.diagnostic(`seen by the second instance after ${seen?.toFixed(1)} ms`);
      assert.equal((await whoami(first, credential)).statusCode, 401, 'and the first at once');
    });

    it('keeps the record between requests: no database read per request while trusted', async (t) => {
      const { first, whoami } = await twoInstances(t, backend);
      const token = await issueToken(first.app, first.config, { grants: ['player:read'] });
      assert.equal((await whoami(first, token)).statusCode, 200);
      // Removing the record behind the service's back shows whether it is read again.
      await sql`delete from tokens where jti = ${jtiOf(token)}`.execute(first.app.db);
      assert.equal((await whoami(first, token)).statusCode, 200, 'the kept record answered');
    });

    it('moves the change mark on a revocation or a deletion, never on an issue or a refresh', async (t) => {
      const test = await buildTestApp(t, { backend });
      const mark = async () =>
        Number(
          (await sql<{ serial: number }>`select serial from token_changes`.execute(test.app.db)).rows[0]
            ?.serial,
        );
      const before = await mark();
      const token = await issueToken(test.app, test.config, { grants: ['player:read'] });
      const refreshed = await test.app.inject({ method: 'POST', url: '/auth/refresh', payload: { token } });
      assert.equal(refreshed.statusCode, 200, refreshed.body);
      assert.equal(await mark(), before, 'an issue and a refresh leave it (kept copies stay good)');
      assert.equal(await revokeFromCommandLine(test, jtiOf(token)), 2);
      const revoked = await mark();
      assert.ok(revoked > before, 'a revocation moves it');
      // The successor: nothing refers to it.
      const successor = jtiOf(refreshed.json().token as string);
      await sql`delete from tokens where jti = ${successor}`.execute(test.app.db);
      assert.ok((await mark()) > revoked, 'a deletion moves it');
    });

    if (backend.cache === 'redis') {
      it('stops trusting a subscription that went silent without closing, and reads the database', async (t) => {
        const { test, proxy } = await instanceBehindRedisProxy(t, backend);
        addWhoamiRoute(test.app, 'player:read');
        const whoami = (token: string) =>
          test.app.inject({ method: 'GET', url: '/test/whoami', headers: bearer(token) });
        assert.notEqual(await within(5000, async () => subscriptions(test) > 0), undefined, 'subscribed');
        const token = await issueToken(test.app, test.config, { grants: ['player:read'] });
        assert.equal((await whoami(token)).statusCode, 200);
        proxy.freeze();
        const lost = () =>
          test.logs.lines.some((line) => String(line.msg).startsWith('invalidation feed lost'));
        assert.notEqual(
          await within(15_000, async () => lost()),
          undefined,
          'a silent subscription is found out',
        );
        // Revoked where the instance cannot hear it: only the database knows.
        assert.equal(await revokeFromCommandLine(test, jtiOf(token), { withoutRedis: true }), 1);
        assert.equal((await whoami(token)).statusCode, 401);
        proxy.restore();
      });

      it('reads the database while its subscription is down, and drops every record when it is back', async (t) => {
        const { second, whoami, first } = await twoInstances(t, backend);
        const token = await issueToken(first.app, first.config, { grants: ['player:read'] });
        assert.equal((await whoami(second, token)).statusCode, 200);
        const admin = new Redis(String(testRedisUrl));
        t.after(() => admin.quit());
        // The instances' subscriptions are the pub/sub connections named after their key space.
        const clients = String(await admin.call('CLIENT', 'LIST', 'TYPE', 'pubsub'))
          .split('\n')
          .filter((line) =>
            line.includes(`name=player-data-service:${second.config.redisKeyPrefix}:subscriber `),
          );
        assert.equal(clients.length, 2, 'one subscription per instance');
        const lost = () =>
          second.logs.lines.filter((line) => String(line.msg).startsWith('invalidation feed lost')).length;
        for (const client of clients) {
          const clientId = /id=(\d+)/.exec(client)?.[1];
          assert.ok(clientId, client);
          await admin.call('CLIENT', 'KILL', 'ID', clientId);
        }
        assert.notEqual(
          await within(5000, async () => lost() > 0),
          undefined,
          'the instance notices its subscription is gone',
        );
        // A revocation nobody publishes (the command line without Redis): only the database knows.
        assert.equal(await revokeFromCommandLine(first, jtiOf(token), { withoutRedis: true }), 1);
        assert.equal((await whoami(second, token)).statusCode, 401);
        assert.notEqual(
          await within(5000, async () => subscriptions(second) > 1),
          undefined,
          'it subscribes again by itself',
        );
        assert.equal((await whoami(second, token)).statusCode, 401);
      });

      it('hears within about a second a revocation nobody published (the command line without Redis)', async (t) => {
        const { first, second, whoami } = await twoInstances(t, backend);
        const token = await issueToken(first.app, first.config, { grants: ['player:read'] });
        for (const instance of [first, second]) assert.equal((await whoami(instance, token)).statusCode, 200);
        assert.equal(await revokeFromCommandLine(first, jtiOf(token), { withoutRedis: true }), 1);
        for (const instance of [first, second]) {
          const seen = await within(TOKEN_CHANGES_CHECK_MS + 500, async () => {
            return (await whoami(instance, token)).statusCode === 401;
          });
          assert.notEqual(seen, undefined, 'the revoked token is still accepted 1.5 s later');
        }
      });

      it('hears within about a second a revocation whose publish failed', async (t) => {
        // The first instance reaches Redis through a proxy that will go silent; the second directly.
        const { test: first, proxy } = await instanceBehindRedisProxy(t, backend);
        const second = await buildTestApp(t, {
          backend,
          databaseUrl: first.databaseUrl,
          redisKeyPrefix: first.config.redisKeyPrefix,
        });
        addWhoamiRoute(second.app, 'player:read');
        for (const test of [first, second])
          assert.notEqual(await within(5000, async () => subscriptions(test) > 0), undefined, 'subscribed');
        const token = await issueToken(first.app, first.config, { grants: ['player:read'] });
        const refresh = (presented: string) =>
          first.app.inject({ method: 'POST', url: '/auth/refresh', payload: { token: presented } });
        const refreshed = await refresh(token);
        assert.equal(refreshed.statusCode, 200, refreshed.body);
        const successor = refreshed.json().token as string;
        const whoami = () =>
          second.app.inject({ method: 'GET', url: '/test/whoami', headers: bearer(successor) });
        assert.equal((await whoami()).statusCode, 200, 'the second instance keeps the successor');
        proxy.freeze();
        // Presenting the exchanged token again revokes its chain, successor included; the publish fails.
        assert.equal((await refresh(token)).statusCode, 401);
        const seen = await within(
          TOKEN_CHANGES_CHECK_MS + 500,
          async () => (await whoami()).statusCode === 401,
        );
        proxy.restore();
        assert.notEqual(
          seen,
          undefined,
          'the second instance still accepts the revoked successor 1.5 s later',
        );
      });
    }
  },
  { caches: 'crossed' },
);
