import assert from 'node:assert/strict';
import { it } from 'node:test';
import { createRedis } from '../../src/platform/redis.js';
import { describeOrSkip } from '../helpers/backends.js';
import { deferClose } from '../helpers/build-test-app.js';
import { skipWithoutRedis, testRedisUrl } from '../helpers/environment.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';

/** Keeps the event loop busy for `ms`, as a large answer's serialization or a long collection does. */
function stallEventLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy
  }
}

describeOrSkip('the Redis connection', { skip: skipWithoutRedis }, () => {
  it('reads an answer that came while the event loop was stalled past the command timeout', async (t) => {
    const redis = createRedis(testRedisUrl ?? '', { connectionName: 'redis-test', commandTimeoutMs: 100 });
    await redis.connect();
    deferClose(t, () => redis.quit());
    for (let round = 0; round < 5; round += 1) {
      // Redis answers within a millisecond; the loop reads the answer only after 300 ms, when the
      // command's timer is also due and runs first.
      const commands = [redis.ping(), redis.echo(`round ${round}`), redis.pipeline().ping().exec()];
      stallEventLoop(300);
      const [pong, echo, piped] = await Promise.all(commands);
      assert.equal(pong, 'PONG');
      assert.equal(echo, `round ${round}`);
      assert.deepEqual(piped, [[null, 'PONG']]);
    }
    assert.equal(redis.status, 'ready');
  });

  it('still fails a command that no answer comes for, within the timeout and a turn of the loop', async (t) => {
    const target = new URL(testRedisUrl ?? '');
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
    deferClose(t, () => proxy.close());
    const redis = createRedis(`redis://${proxy.host}:${proxy.port}`, { commandTimeoutMs: 100 });
    redis.on('error', () => undefined);
    await redis.connect();
    deferClose(t, () => redis.disconnect());
    proxy.freeze();
    const started = performance.now();
    await assert.rejects(redis.get('never-answered'), /Command timed out/);
    const took = performance.now() - started;
    assert.ok(took >= 95 && took < 1000, `failed after ${took} ms`);
  });
});
