import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { before, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { migrations } from '../../src/migrations.js';
import type { TokensService } from '../../src/modules/tokens/tokens.service.js';
import { describeOrSkip } from '../helpers/backends.js';
import { deferClose, suiteScope } from '../helpers/build-test-app.js';
import { type Deployment, startDeployment } from '../helpers/deployment.js';
import { skipOn } from '../helpers/environment.js';
import { type FakeUpstream, FIXTURE_PLAYERS, startFakeUpstream } from '../helpers/fake-upstream.js';
import type { ServiceProcess } from '../helpers/service-process.js';
import { tokensOnDatabase } from '../helpers/tokens.js';

/*
 * Several instances of the service, each a process of its own, on one PostgreSQL database and one Redis:
 * what they share must behave as one service, seen through HTTP only. Each test would fail if the instances
 * each kept their own (migrations, cache, single-flight lock, budget, revocations).
 */

const INSTANCES = 3;
const TIMEOUT_MS = 60_000;
/** Both servers are needed: one PostgreSQL database and one Redis for all the instances. */
const skip = skipOn('postgres', 'redis');

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: string;
}

interface RequestOptions {
  readonly token?: string;
  readonly method?: 'GET' | 'POST';
  readonly body?: unknown;
}

/** One request to one instance, over HTTP. */
async function request(
  instance: ServiceProcess,
  path: string,
  options: RequestOptions = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${instance.url}${path}`, {
    method: options.method ?? 'GET',
    headers,
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

/** The instance that serves the `index`th request of a burst spread over all of them in turn. */
const nth = (instances: readonly ServiceProcess[], index: number): ServiceProcess => {
  const instance = instances[index % instances.length];
  if (!instance) throw new Error('no instance');
  return instance;
};

/** A player no test has asked for: a UUID nobody has, which the fake says never joined (404). */
const coldPlayer = () => randomBytes(16).toString('hex');

/** The calls the upstream received for one player. */
const playerCalls = (upstream: FakeUpstream, uuid: string) =>
  upstream.callsTo('/v2/player').filter((call) => call.query.get('uuid') === uuid).length;

/** The migrations the database records as applied, by name, as often as it records each. */
async function appliedMigrations(databaseUrl: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>('select name from kysely_migration order by name');
    return rows.map((row) => row.name);
  } finally {
    await client.end();
  }
}

describeOrSkip('several instances on one PostgreSQL and one Redis', { skip }, () => {
  const scope = suiteScope();
  let upstream: FakeUpstream;
  let deployment: Deployment;
  let tokens: TokensService;
  let reader: string;

  before(
    async () => {
      upstream = await startFakeUpstream();
      deferClose(scope, () => upstream.close());
      // All at once, on a database none has migrated: an instance that cannot start (its migrations racing
      // another's) fails this hook, with its output, and so the suite; the first test looks at the rest.
      deployment = await startDeployment(scope, { count: INSTANCES, upstream });
      tokens = tokensOnDatabase(scope, deployment.databaseUrl);
      reader = (await tokens.issue(100n, ['player:read'])).token;
    },
    { timeout: TIMEOUT_MS },
  );

  it('all come up on a fresh database, which one of them migrates, each migration once', async () => {
    for (const instance of deployment.instances) {
      const ready = await request(instance, '/ready');
      assert.equal(ready.status, 200, ready.body);
    }
    // The others waited on the migration lock, then found nothing left to apply (and said nothing).
    const migrators = deployment.instances.filter((instance) =>
      /"msg":"migrated"/.test(instance.output.join('')),
    );
    assert.equal(migrators.length, 1, 'exactly one instance applied migrations');
    assert.deepEqual(await appliedMigrations(deployment.databaseUrl), Object.keys(migrations).sort());
  });

  it('serves a player fetched through one instance from the shared cache on every other', async () => {
    const { uuid } = FIXTURE_PLAYERS.minikloon;
    const [first, ...others] = deployment.instances;
    assert.ok(first);
    const fetched = await request(first, `/player/${uuid}`, { token: reader });
    assert.equal(fetched.status, 200, fetched.body);
    assert.equal(fetched.headers.get('x-cache'), 'MISS');
    for (const other of others) {
      const hit = await request(other, `/player/${uuid}`, { token: reader });
      assert.equal(hit.status, 200, hit.body);
      assert.equal(hit.headers.get('x-cache'), 'HIT', `${other.url} found it in the shared cache`);
      assert.equal(hit.body, fetched.body);
    }
    assert.equal(playerCalls(upstream, uuid), 1, 'one upstream call for all the instances');
  });

  it('makes one upstream call for concurrent requests for one cold player spread over every instance', async (t) => {
    const { uuid } = FIXTURE_PLAYERS.builder;
    // A slow upstream, so that every instance is asked while the one fetch is still out.
    upstream.misbehave({ delayMs: 500 });
    t.after(() => upstream.misbehave({ delayMs: 0 }));
    const answers = await Promise.all(
      Array.from({ length: 20 * INSTANCES }, (_, index) =>
        request(nth(deployment.instances, index), `/player/${uuid}`, { token: reader }),
      ),
    );
    for (const answer of answers) assert.equal(answer.status, 200, answer.body);
    assert.equal(playerCalls(upstream, uuid), 1, 'one upstream call for every instance');
    // A MISS is an answer that found no copy and joined the fetch (its own, or another instance's by the
    // shared lock). Every instance having one shows the burst overlapped the fetch on each: were the lock
    // per instance, each would have fetched the player itself.
    deployment.instances.forEach((instance, which) => {
      const ownAnswers = answers.filter((_, index) => index % INSTANCES === which);
      assert.ok(
        ownAnswers.some((answer) => answer.headers.get('x-cache') === 'MISS'),
        `${instance.url} answered while the fetch was out`,
      );
    });
  });

  /** Requests sent this long after a revocation's answer are refused by every instance. */
  const REVOKED_WITHIN_MS = 300;

  it('refuses a token revoked through any instance on every instance at once', async (t) => {
    const reviewer = (await tokens.issue(1n, ['applications:review'])).token;
    const applicant = (await tokens.issue(2n, [])).token;
    // One round per instance revoking. A revocation no feed told of would still be heard at the next
    // reading of the database's change mark, once a second: 300 ms is well inside that, and the rounds
    // follow one another at once, so the change mark alone could not pass them all.
    for (const [round, through] of deployment.instances.entries()) {
      const elsewhere = deployment.instances[(round + 1) % deployment.instances.length] as ServiceProcess;
      const { id, credential } = await approvedApplication(through, elsewhere, applicant, reviewer, round);
      // Every instance accepts the credential, and so keeps its record in process.
      for (const instance of deployment.instances) {
        const accepted = await request(instance, '/admin/developer/applications', { token: credential });
        assert.equal(accepted.status, 200, accepted.body);
      }
      const revoked = await request(through, `/admin/developer/applications/${id}/revoke`, {
        method: 'POST',
        token: reviewer,
        body: { reason: `round ${round}` },
      });
      assert.equal(revoked.status, 200, revoked.body);
      const since = performance.now();
      const seenAfter = await Promise.all(
        deployment.instances.map((instance) => refusedAfter(instance, credential, since, REVOKED_WITHIN_MS)),
      );
      t.diagnostic(`round ${round}: refused after ${seenAfter.map((ms) => ms?.toFixed(1)).join(', ')} ms`);
      deployment.instances.forEach((instance, which) => {
        assert.notEqual(
          seenAfter[which],
          undefined,
          `${instance.url} still accepts the credential ${REVOKED_WITHIN_MS} ms after its revocation`,
        );
      });
    }
  });
});

/**
 * An application approved through `through`: its id and a token made from its key (a `player:read` token),
 * the key collected through `through` and exchanged on another instance.
 */
async function approvedApplication(
  through: ServiceProcess,
  elsewhere: ServiceProcess,
  applicant: string,
  reviewer: string,
  round: number,
): Promise<{ id: string; credential: string }> {
  const applied = await request(through, '/admin/developer/applications', {
    method: 'POST',
    token: applicant,
    body: { name: `bot ${round}`, description: '', grants: ['player:read'] },
  });
  assert.equal(applied.status, 200, applied.body);
  const { id } = JSON.parse(applied.body) as { id: string };
  const approved = await request(through, `/admin/developer/applications/${id}/approve`, {
    method: 'POST',
    token: reviewer,
    body: {},
  });
  assert.equal(approved.status, 200, approved.body);
  const collected = await request(through, `/admin/developer/applications/${id}/key`, {
    method: 'POST',
    token: applicant,
  });
  assert.equal(collected.status, 200, collected.body);
  const { key } = JSON.parse(collected.body) as { key: string };
  const exchanged = await request(elsewhere, '/auth/token', { method: 'POST', body: { key } });
  assert.equal(exchanged.status, 200, exchanged.body);
  const { token } = JSON.parse(exchanged.body) as { token: string };
  return { id, credential: token };
}

/**
 * How long after `since` the first request `instance` refused `token` with was sent (polling), or
 * undefined if it still accepted one sent `withinMs` after.
 */
async function refusedAfter(
  instance: ServiceProcess,
  token: string,
  since: number,
  withinMs: number,
): Promise<number | undefined> {
  for (;;) {
    const sentAfter = performance.now() - since;
    if (sentAfter > withinMs) return undefined;
    const answer = await request(instance, '/admin/developer/applications', { token });
    if (answer.status === 401) return sentAfter;
    assert.equal(answer.status, 200, answer.body);
    await sleep(2);
  }
}

/** The Hypixel key's requests per window, as the fake upstream announces it (RateLimit-Limit). */
const KEY_LIMIT = 5;

describeOrSkip('several instances sharing one upstream key', { skip }, () => {
  it('never make more upstream calls than the key allows, whichever instance each lookup reaches', {
    timeout: TIMEOUT_MS,
  }, async (t) => {
    const upstream = await startFakeUpstream({ rateLimit: KEY_LIMIT, rateLimitWindowSeconds: 60 });
    deferClose(t, () => upstream.close());
    const { instances, databaseUrl } = await startDeployment(t, { count: INSTANCES, upstream });
    const tokens = tokensOnDatabase(t, databaseUrl);
    const players = Array.from({ length: 10 * INSTANCES }, coldPlayer);
    // An owner per lookup: each owner's share of the key (at least one lookup) lets theirs through, so
    // only the key's budget can hold the burst back.
    const owners = await Promise.all(
      players.map(async (_, index) => (await tokens.issue(BigInt(1000 + index), ['player:read'])).token),
    );
    const answers = await Promise.all(
      players.map((uuid, index) =>
        request(nth(instances, index), `/player/${uuid}`, { token: owners[index] ?? '' }),
      ),
    );
    const calls = upstream.callsTo('/v2/player').length;
    assert.ok(calls >= 1 && calls <= KEY_LIMIT, `${calls} upstream calls on a key that allows ${KEY_LIMIT}`);
    const found = answers.filter((answer) => answer.status === 404);
    assert.equal(found.length, calls, 'each call answered one lookup (a player who never joined)');
    for (const refused of answers.filter((answer) => answer.status !== 404)) {
      assert.equal(refused.status, 429, refused.body);
      assert.ok(Number(refused.headers.get('retry-after')) >= 1, 'with Retry-After');
      const body = JSON.parse(refused.body) as Record<string, unknown>;
      assert.equal(body.success, false);
      assert.equal(body.throttle, true);
      assert.equal(body.player, null);
      assert.doesNotMatch(
        String(body.cause),
        /your share/,
        "the key's budget refused it, not the owner's share",
      );
    }
  });
});
