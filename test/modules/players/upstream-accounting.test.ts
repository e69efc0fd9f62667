import assert from 'node:assert/strict';
import { after, before, describe, it, type TestContext } from 'node:test';
import { type FakeUpstream, startFakeUpstream } from '../../helpers/fake-upstream.js';
import { buildPlayerTestApp } from '../../helpers/player-app.js';
import { issueToken } from '../../helpers/tokens.js';

/** A cold UUID per request: nothing cached, each lookup goes upstream. */
const cold = (index: number) => index.toString(16).padStart(32, 'd');

const linesWith = (logs: { lines: Record<string, unknown>[] }, message: string) =>
  logs.lines.filter((line) => line.msg === message);

describe('upstream accounting: the circuit breaker, outcomes and logs', () => {
  let fake: FakeUpstream;
  before(async () => {
    fake = await startFakeUpstream();
  });
  after(() => fake.close());

  const setup = (t: TestContext, env: Record<string, string> = {}) =>
    buildPlayerTestApp(t, fake, { env: { UPSTREAM_RETRY_BASE_MS: '1', ...env } });

  it('counts failed requests, not attempts: with 2 retries and 3 failures to open, the 4th request is paused', async (t) => {
    const { get, logs } = await setup(t, { UPSTREAM_RETRIES: '2', UPSTREAM_BREAKER_FAILURES: '3' });
    fake.misbehave({ failWith: 500 });
    const statuses = [];
    for (let index = 1; index <= 4; index++) statuses.push((await get(`/player/${cold(index)}`)).statusCode);
    assert.deepEqual(statuses, [502, 502, 502, 503]);
    assert.equal(fake.callsTo('/v2/player').length, 9, 'three requests of three attempts each');

    const failures = linesWith(logs, 'upstream request failed');
    assert.equal(failures.length, 3, 'each failed request logged once, not per attempt');
    for (const line of failures) {
      assert.equal(line.level, 'warn');
      assert.equal(line.outcome, 'server_error');
      assert.equal(line.attempts, 3);
      assert.equal(line.cause, 'hypixel answered with an error (500)');
    }
    const opened = linesWith(logs, 'upstream circuit opened: calls paused');
    assert.equal(opened.length, 1);
    assert.equal(opened[0]?.upstream, 'hypixel');
  });

  it('counts an HTML or wrong-shape 200 as a failure for the breaker and in metrics, and closes on success', async (t) => {
    const { app, get, logs } = await setup(t, {
      UPSTREAM_RETRIES: '0',
      UPSTREAM_BREAKER_FAILURES: '2',
      UPSTREAM_BREAKER_COOLDOWN_MS: '100',
    });
    fake.misbehave({ garbage: true });
    assert.equal((await get(`/player/${cold(1)}`)).statusCode, 502);
    fake.misbehave({ garbage: false, answerWith: { status: 200, body: '{"success":true,"player":[1]}' } });
    assert.equal((await get(`/player/${cold(2)}`)).statusCode, 502);
    assert.equal((await get(`/player/${cold(3)}`)).statusCode, 503, 'two bad 200s opened the circuit');

    const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    assert.match(
      metrics,
      /upstream_requests_total\{upstream="hypixel",endpoint="player",outcome="bad_response"\} 2/,
    );
    assert.doesNotMatch(metrics, /outcome="ok"/, 'a 200 the service could not use is not ok');
    assert.match(
      metrics,
      /upstream_requests_total\{upstream="hypixel",endpoint="player",outcome="circuit_open"\} 1/,
    );

    fake.reset();
    await new Promise((resolve) => setTimeout(resolve, 150));
    assert.equal((await get(`/player/${cold(4)}`)).statusCode, 404, 'the trial request went through');
    assert.equal(linesWith(logs, 'upstream circuit closed: calls resumed').length, 1);
  });

  it('refuses an answer longer than UPSTREAM_MAX_BODY_BYTES, declared or not, and one nested too deeply to write: 502, each a bad_response', async (t) => {
    const { app, get } = await setup(t, { UPSTREAM_RETRIES: '0', UPSTREAM_MAX_BODY_BYTES: '65536' });
    const player = (inner: string) => `{"success":true,"player":{"uuid":"${cold(1)}","x":${inner}}}`;
    const long = player(JSON.stringify('x'.repeat(70_000)));
    const failures = [];
    for (const declareLength of [true, false]) {
      fake.misbehave({ answerWith: { status: 200, body: long, declareLength } });
      failures.push(await get(`/player/${cold(declareLength ? 1 : 2)}`));
    }
    // Parsing such a value is fine; writing it back out recursed once per level and overflowed the stack.
    const depth = 20_000;
    fake.misbehave({ answerWith: { status: 200, body: player(`${'['.repeat(depth)}${']'.repeat(depth)}`) } });
    failures.push(await get(`/player/${cold(3)}`));
    assert.deepEqual(
      failures.map((reply) => [reply.statusCode, reply.json()]),
      [
        ...[1, 2].map(() => [
          502,
          {
            success: false,
            cause: 'hypixel answered with more than 65536 bytes',
            throttle: false,
            player: null,
          },
        ]),
        [
          502,
          {
            success: false,
            cause: 'hypixel answered with JSON nested too deeply to serve',
            throttle: false,
            player: null,
          },
        ],
      ],
    );
    assert.match(
      (await app.inject({ method: 'GET', url: '/metrics' })).body,
      /upstream_requests_total\{upstream="hypixel",endpoint="player",outcome="bad_response"\} 3/,
    );
    // The same answer within the bound is served.
    fake.misbehave({ answerWith: { status: 200, body: player('[[1]]'), declareLength: true } });
    const served = await get(`/player/${cold(4)}`);
    assert.equal(served.statusCode, 200, served.body);
    assert.deepEqual(served.json().player.x, [[1]]);
  });

  it('logs the key budget running out once, not per refused request', async (t) => {
    const small = await startFakeUpstream({ rateLimit: 2, rateLimitWindowSeconds: 60 });
    t.after(() => small.close());
    const { app, config, get, logs } = await buildPlayerTestApp(t, small, {
      env: { UPSTREAM_OWNER_SHARE_PERCENT: '100' },
    });
    // Another owner spends half of the key: this owner's share (all of it) is not what runs out.
    const other = await issueToken(app, config, { owner: 42n });
    assert.equal((await get(`/player/${cold(0)}`, other)).statusCode, 404);
    const replies = [];
    for (let index = 1; index <= 5; index++) replies.push(await get(`/player/${cold(index)}`));
    assert.deepEqual(
      replies.map((reply) => reply.statusCode),
      [404, 429, 429, 429, 429],
    );
    for (const reply of replies.slice(1))
      assert.equal(reply.json().cause, 'the hypixel rate limit is used up');
    const usedUp = linesWith(logs, 'upstream budget used up; uncached lookups are refused until it resets');
    assert.equal(usedUp.length, 1);
    assert.equal(usedUp[0]?.level, 'warn');
    assert.equal(usedUp[0]?.upstream, 'hypixel');
    assert.equal(linesWith(logs, 'upstream request failed').length, 0, 'a refusal sent nothing: no failure');
  });
});
