import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';
import { it } from 'node:test';
import Fastify from 'fastify';
import { Redis } from 'ioredis';
import { createRedisInvalidationFeed } from '../../../src/platform/cache/invalidation.js';
import { loggerOptions } from '../../../src/platform/logger.js';
import { createRedis } from '../../../src/platform/redis.js';
import { describeOrSkip } from '../../helpers/backends.js';
import { LogCapture } from '../../helpers/build-test-app.js';
import { skipWithoutRedis, testRedisUrl } from '../../helpers/environment.js';
import { eventually } from '../../helpers/poll.js';

/** Longer than a Redis command may take (REDIS_COMMAND_TIMEOUT_MS, 1 s) before it is given up. */
const HOLD_MS = 1500;

/**
 * A TCP proxy in front of Redis that holds the first SUBSCRIBE it sees (and what follows it on that
 * connection) for HOLD_MS, as a loaded Redis or machine would: the command times out. Later connections
 * pass straight through.
 */
async function redisHoldingFirstSubscribe(target: URL) {
  const open = new Set<Socket>();
  let held = false;
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 6379), target.hostname);
    for (const [socket, other] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      open.add(socket);
      socket.on('error', () => other.destroy());
      socket.on('close', () => {
        open.delete(socket);
        other.destroy();
      });
    }
    upstream.pipe(client);
    let holding: Buffer[] | undefined;
    client.on('data', (chunk: Buffer) => {
      if (holding) {
        holding.push(chunk);
        return;
      }
      // The command's name as RESP sends it: a bulk string of its own (the connection's name,
      // "...:subscriber", is another one).
      if (!held && /\r\nsubscribe\r\n/i.test(chunk.toString('latin1'))) {
        held = true;
        const queue = [chunk];
        holding = queue;
        setTimeout(() => {
          holding = undefined;
          for (const part of queue) if (!upstream.destroyed) upstream.write(part);
        }, HOLD_MS);
        return;
      }
      upstream.write(chunk);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    wasHeld: () => held,
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describeOrSkip('the invalidation feed through Redis', { skip: skipWithoutRedis }, () => {
  it('subscribes again when its SUBSCRIBE times out, then hears what is published', async (t) => {
    const proxy = await redisHoldingFirstSubscribe(new URL(String(testRedisUrl)));
    t.after(() => proxy.close());
    const logs = new LogCapture();
    const redis = createRedis(proxy.url);
    t.after(() => redis.disconnect());
    const channel = `test:feed:${process.pid}:${Date.now()}`;
    const feed = createRedisInvalidationFeed(
      redis,
      channel,
      Fastify({ logger: loggerOptions('info', logs) }).log,
    );
    t.after(() => feed.close());
    const heard: string[][] = [];
    feed.listen({ invalidated: (keys) => void heard.push([...keys]), reset: () => undefined });
    const said = (message: string) => logs.lines.filter((line) => line.msg === message).length;

    await eventually(
      'the first SUBSCRIBE timed out',
      () => said('invalidation feed could not subscribe') > 0,
    );
    assert.ok(proxy.wasHeld());
    assert.equal(feed.trusted(), false, 'not trusted without a subscription');
    await eventually('subscribed again by itself', () => feed.trusted(), { withinMs: 15_000 });
    assert.equal(said('invalidation feed subscribed'), 1);

    const publisher = new Redis(String(testRedisUrl));
    t.after(() => publisher.quit());
    await publisher.publish(channel, 'a\nb');
    await eventually('the published keys are heard', () => heard.length > 0);
    assert.deepEqual(heard, [['a', 'b']]);
  });
});
