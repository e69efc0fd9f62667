import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';
import { it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { createRedisInvalidationFeed } from '../../../src/platform/cache/invalidation.js';
import { createRedis } from '../../../src/platform/redis.js';
import { describeOrSkip } from '../../helpers/backends.js';
import { deferClose, LogCapture } from '../../helpers/build-test-app.js';
import { skipWithoutRedis, testRedisUrl } from '../../helpers/environment.js';
import { freshKeyPrefix } from '../../helpers/redis-keys.js';

/**
 * A proxy in front of the test Redis that holds the server's answers on the first connection that sends a
 * SUBSCRIBE for `holdMs` after it: Redis takes the subscription, and the answer comes after the client's
 * 1 s command timeout, as when a stalled event loop runs the timeout before it reads an answer that came.
 */
async function holdingFirstSubscribe(t: TestContext, holdMs: number): Promise<string> {
  const target = new URL(testRedisUrl ?? '');
  let held = false;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 6379), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    let holding = false;
    const waiting: Buffer[] = [];
    client.on('data', (chunk: Buffer) => {
      if (!held && /\r\nsubscribe\r\n/i.test(chunk.toString('latin1'))) {
        held = true;
        holding = true;
        setTimeout(() => {
          holding = false;
          for (const part of waiting.splice(0)) client.write(part);
        }, holdMs);
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (holding) waiting.push(chunk);
      else client.write(chunk);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  deferClose(t, async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  const url = new URL(testRedisUrl ?? '');
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as { port: number }).port);
  return url.toString();
}

describeOrSkip('the Redis invalidation feed', { skip: skipWithoutRedis }, () => {
  it('retries a SUBSCRIBE whose answer came after its timeout, and is trusted once subscribed', async (t) => {
    const url = await holdingFirstSubscribe(t, 1500);
    const logs = new LogCapture();
    const redis = createRedis(url, { connectionName: 'invalidation-feed-test' });
    await redis.connect();
    deferClose(t, () => redis.quit());
    const channel = `${freshKeyPrefix(t)}invalidate:test`;
    const feed = createRedisInvalidationFeed(redis, channel, pino(logs));
    deferClose(t, () => feed.close());

    // The first SUBSCRIBE times out (1 s) while the proxy holds its answer; the feed connects again.
    const deadline = performance.now() + 10_000;
    while (!feed.trusted() && performance.now() < deadline) await sleep(20);
    assert.ok(feed.trusted(), 'trusted once a SUBSCRIBE went through');
    const messages = logs.lines.map((line) => line.msg);
    assert.ok(
      messages.includes('invalidation feed could not subscribe: connecting again'),
      JSON.stringify(messages),
    );

    // And it hears what another connection publishes.
    const heard: string[] = [];
    feed.listen({ invalidated: (keys) => heard.push(...keys), reset: () => undefined });
    const publisher = createRedis(testRedisUrl ?? '', { connectionName: 'invalidation-feed-test-publisher' });
    await publisher.connect();
    deferClose(t, () => publisher.quit());
    await publisher.publish(channel, 'player:a\nplayer:b');
    const heardBy = performance.now() + 5000;
    while (heard.length < 2 && performance.now() < heardBy) await sleep(10);
    assert.deepEqual(heard, ['player:a', 'player:b']);
  });
});
