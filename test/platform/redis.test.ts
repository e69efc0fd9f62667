import assert from 'node:assert/strict';
import { once } from 'node:events';
import { it, type TestContext } from 'node:test';
import { createRedis } from '../../src/platform/redis.js';
import { describeOrSkip } from '../helpers/backends.js';
import { deferClose } from '../helpers/build-test-app.js';
import { skipWithoutRedis, testRedisUrl } from '../helpers/environment.js';
import { freshKeyPrefix } from '../helpers/redis-keys.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';

/** Keeps the event loop busy for `ms`, as a large answer's serialization or a long collection does. */
function stallEventLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy
  }
}

/** A connection with a 100 ms command timeout to the test Redis through a proxy the test can freeze or cut. */
async function redisBehindProxy(t: TestContext) {
  const target = new URL(testRedisUrl ?? '');
  const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
  deferClose(t, () => proxy.close());
  const redis = createRedis(`redis://${proxy.host}:${proxy.port}`, { commandTimeoutMs: 100 });
  redis.on('error', () => undefined);
  await redis.connect();
  deferClose(t, () => redis.disconnect());
  return { proxy, redis };
}

describeOrSkip('the Redis connection', { skip: skipWithoutRedis }, () => {
  it('reads an answer that came while the event loop was stalled past the command timeout', async (t) => {
    const redis = createRedis(testRedisUrl ?? '', { connectionName: 'redis-test', commandTimeoutMs: 100 });
    await redis.connect();
    deferClose(t, () => redis.quit());
    for (let round = 0; round < 3; round += 1) {
      // Redis answers within a millisecond (600 ms leaves room for a loaded machine); the loop reads the
      // answer only after the stall, when the commands' timers are long due and run first.
      const commands = [redis.ping(), redis.echo(`round ${round}`), redis.pipeline().ping().exec()];
      stallEventLoop(600);
      const [pong, echo, piped] = await Promise.all(commands);
      assert.equal(pong, 'PONG');
      assert.equal(echo, `round ${round}`);
      assert.deepEqual(piped, [[null, 'PONG']]);
    }
    assert.equal(redis.status, 'ready');
  });

  it('still fails a command that no answer comes for, within the timeout and a turn of the loop', async (t) => {
    const { proxy, redis } = await redisBehindProxy(t);
    proxy.freeze();
    const started = performance.now();
    await assert.rejects(redis.get('never-answered'), /Command timed out/);
    const took = performance.now() - started;
    // Not before its timeout; and soon after (the bound is wide: a loaded machine delays timers).
    assert.ok(took >= 95 && took < 5000, `failed after ${took} ms`);
  });

  it('never sends again, once it has reconnected, a command that timed out', async (t) => {
    const { proxy, redis } = await redisBehindProxy(t);
    const direct = createRedis(testRedisUrl ?? '');
    await direct.connect();
    deferClose(t, () => direct.quit());
    const key = `${freshKeyPrefix(t)}counted`;

    proxy.freeze(); // the INCR waits in the proxy, unread
    await assert.rejects(redis.incr(key), /Command timed out/);
    proxy.cut(); // and is lost with the connection; ioredis keeps it as unanswered
    proxy.restore();
    await once(redis, 'ready');
    assert.equal(await redis.ping(), 'PONG', 'anything sent again was sent before this');
    assert.equal(await direct.get(key), null, 'the INCR whose caller gave up never ran');
  });
});
