import assert from 'node:assert/strict';
import { it } from 'node:test';
import { Redis } from 'ioredis';
import { describeEachBackend, describeOrSkip } from '../../helpers/backends.js';
import { buildTestApp } from '../../helpers/build-test-app.js';
import { skipWithoutRedis, testRedisUrl } from '../../helpers/environment.js';

describeEachBackend('health', (backend) => {
  it('answers /health and /ready with the database and migrations checked', async (t) => {
    const { app } = await buildTestApp(t, { backend });
    const health = await app.inject({ method: 'GET', url: '/health' });
    assert.equal(health.statusCode, 200);
    assert.deepEqual(health.json(), { status: 'ok' });
    const ready = await app.inject({ method: 'GET', url: '/ready' });
    assert.equal(ready.statusCode, 200, ready.body);
    assert.deepEqual(ready.json(), { status: 'ready', checks: { database: 'ok', migrations: 'ok' } });
  });

  it('is not ready, with an ErrorResponse naming the dependency only, when one is unreachable', async (t) => {
    // Port 1 on loopback: nothing listens there, so the connection is refused at once.
    const { app, logs } = await buildTestApp(t, { backend, env: { REDIS_URL: 'redis://127.0.0.1:1' } });
    const ready = await app.inject({ method: 'GET', url: '/ready' });
    assert.equal(ready.statusCode, 503);
    assert.equal(ready.headers['retry-after'], '2', 'a load balancer knows when to ask again');
    const body = ready.json();
    assert.equal(body.success, false);
    assert.equal(body.cause, 'Not ready');
    assert.deepEqual(
      body.extra.map((problem: { name: string; reason: string; developer_reason: string }) => [
        problem.name,
        problem.reason,
        problem.developer_reason,
      ]),
      [['DEPENDENCY_UNAVAILABLE', 'redis is unavailable', 'redis does not answer; the service log says why']],
    );
    const logged = logs.lines.find((line) => line.msg === 'readiness check failed');
    assert.equal(logged?.dependency, 'redis', 'the details are in the log');
    assert.ok((logged?.err as { message?: string })?.message, 'with the driver message');
  });

  it('is not ready while migrations are pending, and logs which', async (t) => {
    const { app, logs } = await buildTestApp(t, { backend, migrate: false });
    const ready = await app.inject({ method: 'GET', url: '/ready' });
    assert.equal(ready.statusCode, 503);
    const [problem] = ready.json().extra;
    assert.equal(problem.reason, 'migrations is unavailable');
    assert.doesNotMatch(problem.developer_reason, /0001-tokens/);
    const logged = logs.lines.find((line) => line.msg === 'readiness check failed');
    assert.match(String((logged?.err as { message?: string })?.message), /not applied: 0001-tokens/);
  });

  it('counts requests by route and status in /metrics', async (t) => {
    const { app } = await buildTestApp(t, { backend });
    await app.inject({ method: 'GET', url: '/health' });
    await app.inject({ method: 'GET', url: '/health' });
    await app.inject({ method: 'GET', url: '/missing' });
    const metrics = await app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(metrics.statusCode, 200);
    assert.match(String(metrics.headers['content-type']), /^text\/plain/);
    assert.match(metrics.body, /http_requests_total\{method="GET",route="\/health",status="200"\} 2/);
    assert.match(metrics.body, /http_requests_total\{method="GET",route="unmatched",status="404"\} 1/);
    assert.match(
      metrics.body,
      /http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/health",status="200"\}/,
    );
    assert.match(metrics.body, /process_resident_memory_bytes/);
  });

  it('protects /metrics with METRICS_TOKEN when it is set', async (t) => {
    const metricsToken = 'scrape-me-0123456789abcdef';
    const { app } = await buildTestApp(t, { backend, env: { METRICS_TOKEN: metricsToken } });
    const scrape = (authorization?: string) =>
      app.inject({ method: 'GET', url: '/metrics', headers: authorization ? { authorization } : {} });
    const missing = await scrape();
    assert.equal(missing.statusCode, 401);
    assert.equal(missing.json().extra[0].name, 'TOKEN_MISSING');
    // Not a developer's token: the answer names the deployment's setting, and sends no one to the portal.
    assert.match(missing.json().extra[0].developer_reason, /METRICS_TOKEN/);
    assert.doesNotMatch(missing.body, /portal/);
    assert.match(String(missing.headers['www-authenticate']), /^Bearer /);
    for (const wrong of [`Bearer ${metricsToken}x`, 'Bearer short', `Basic ${metricsToken}`]) {
      const refused = await scrape(wrong);
      assert.equal(refused.statusCode, 401, wrong);
      assert.equal(refused.json().extra[0].name, 'TOKEN_INVALID', wrong);
      assert.doesNotMatch(refused.body, /upstream_budget_remaining|scrape-me/);
    }
    const scraped = await scrape(`Bearer ${metricsToken}`);
    assert.equal(scraped.statusCode, 200);
    assert.match(scraped.body, /http_requests_total/);
    assert.equal(
      (await app.inject({ method: 'GET', url: '/health' })).statusCode,
      200,
      'health stays public',
    );
  });
});

describeOrSkip('health with Redis', { skip: skipWithoutRedis }, () => {
  it('checks Redis in /ready and closes the connection with the app', async (t) => {
    const { app, config } = await buildTestApp(t, { redis: true });
    const ready = await app.inject({ method: 'GET', url: '/ready' });
    assert.equal(ready.statusCode, 200, ready.body);
    assert.deepEqual(ready.json().checks, { database: 'ok', migrations: 'ok', redis: 'ok' });
    const observer = new Redis(String(testRedisUrl));
    t.after(() => observer.quit());
    const connections = async (suffix = '') =>
      String(await observer.client('LIST'))
        .split('\n')
        .filter((line) => line.includes(` name=player-data-service:${config.redisKeyPrefix}${suffix} `))
        .length;
    assert.equal(await connections(), 1, "the app's one connection for commands, named after its deployment");
    assert.equal(await connections(':subscriber'), 1, 'and one for its subscription to revocations');
    await app.close();
    assert.equal(await connections(), 0, 'closed with the app');
    assert.equal(await connections(':subscriber'), 0, 'both');
  });
});
