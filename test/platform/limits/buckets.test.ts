import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import Fastify from 'fastify';
import { Redis } from 'ioredis';
import { createMemoryBuckets } from '../../../src/platform/limits/buckets.js';
import { createRedisBuckets } from '../../../src/platform/limits/buckets-redis.js';
import { createRedis } from '../../../src/platform/redis.js';
import { describeOrSkip } from '../../helpers/backends.js';
import { skipWithoutRedis, testRedisUrl } from '../../helpers/environment.js';
import { eventually } from '../../helpers/poll.js';
import { keySpaces } from '../../helpers/redis-keys.js';
import { startTcpProxy } from '../../helpers/tcp-proxy.js';

const redis = testRedisUrl ? new Redis(testRedisUrl) : undefined;
const spaces = keySpaces('buckets');
after(async () => {
  if (redis) await spaces.drop(redis);
  await redis?.quit();
});
const log = Fastify({ logger: false }).log;
/** 100 units, refilled at 10 a second. */
const POLICY = { capacity: 100, windowMs: 10_000 };

describe('token buckets in process', () => {
  const setup = () => {
    const clock = { now: 1_000_000 };
    return { clock, buckets: createMemoryBuckets(() => clock.now) };
  };

  it('admits up to the capacity at once, then as fast as it refills, and says when', async () => {
    const { clock, buckets } = setup();
    const first = await buckets.take('a', 60, POLICY);
    assert.equal(first.admitted, true);
    assert.deepEqual(first.standing, { capacity: 100, windowSeconds: 10, remaining: 40, resetSeconds: 6 });
    assert.equal((await buckets.take('a', 40, POLICY)).admitted, true);
    const refused = await buckets.take('a', 5, POLICY);
    assert.equal(refused.admitted, false);
    assert.equal(refused.admitted === false && refused.retryAfterMs, 500, '5 units at 10 a second');
    assert.equal((await buckets.take('b', 100, POLICY)).admitted, true, 'each key has its own bucket');
    clock.now += 500;
    assert.equal((await buckets.take('a', 5, POLICY)).admitted, true);
    clock.now += 20_000;
    assert.equal((await buckets.standing('a', POLICY)).remaining, 100, 'never more than the capacity');
  });

  it('charges work done past empty, all of it, and admits nothing until it is repaid', async () => {
    const { clock, buckets } = setup();
    await buckets.take('a', 10, POLICY);
    const owing = await buckets.charge('a', 1000, POLICY);
    assert.equal(owing.remaining, 0);
    assert.equal(owing.resetSeconds, 101, 'owes 910 units: 1010 to refill, at 10 a second');
    const refused = await buckets.take('a', 1, POLICY);
    assert.equal(refused.admitted === false && refused.retryAfterMs, 91_100);
    clock.now += 91_100;
    assert.equal((await buckets.take('a', 1, POLICY)).admitted, true);
    // A negative charge gives back, never past full.
    assert.equal((await buckets.charge('a', -5000, POLICY)).remaining, 100);
  });

  it('admits a cost above the capacity when the bucket is full, and then owes the rest', async () => {
    const { clock, buckets } = setup();
    await buckets.take('a', 1, POLICY);
    const notFull = await buckets.take('a', 150, POLICY);
    assert.equal(notFull.admitted === false && notFull.retryAfterMs, 100);
    clock.now += 100;
    assert.equal((await buckets.take('a', 150, POLICY)).admitted, true);
    const after = await buckets.take('a', 1, POLICY);
    assert.equal(after.admitted === false && after.retryAfterMs, 5100, '50 owed, then 1');
  });

  it('follows a policy that changes (an owner given a larger budget)', async () => {
    const { buckets } = setup();
    await buckets.take('a', 100, POLICY);
    assert.equal((await buckets.take('a', 1, POLICY)).admitted, false);
    const larger = { capacity: 1000, windowMs: 10_000 };
    assert.equal((await buckets.take('a', 1, larger)).admitted, false, 'what was spent stays spent');
    assert.equal((await buckets.standing('a', larger)).capacity, 1000);
  });
});

describeOrSkip('token buckets in Redis, shared by instances', { skip: skipWithoutRedis }, () => {
  const client = redis as Redis;
  const fresh = () => spaces.fresh();

  it('admits no more than the capacity across two instances under a concurrent burst', async () => {
    const prefix = fresh();
    const one = createRedisBuckets(client, prefix, log);
    const two = createRedisBuckets(client, prefix, log);
    const policy = { capacity: 200, windowMs: 600_000 };
    const takes = await Promise.all(
      Array.from({ length: 600 }, (_, index) => (index % 2 ? one : two).take('owner', 1, policy)),
    );
    const admitted = takes.filter((take) => take.admitted).length;
    // At most what the bucket held (and the little it refilled meanwhile); an instance may keep up to a
    // twentieth reserved, unspent.
    assert.ok(admitted <= 201, `${admitted} admitted`);
    assert.ok(admitted >= 200 - 2 * (200 / 20), `${admitted} admitted`);
    const refused = takes.find((take) => !take.admitted);
    assert.ok(refused && !refused.admitted && refused.retryAfterMs > 0);
    // Each asked Redis once for the burst's start, not once per take.
    const keys = await client.keys(`${prefix}*`);
    assert.deepEqual(keys, [`${prefix}owner`]);
    const ttl = await client.pttl(`${prefix}owner`);
    assert.ok(ttl > 0, 'the bucket expires once it would be full again');
    await client.del(keys);
  });

  it('shares debt: work charged on one instance is owed on the other, all of it', async () => {
    const prefix = fresh();
    const one = createRedisBuckets(client, prefix, log);
    const two = createRedisBuckets(client, prefix, log);
    assert.equal((await one.take('owner', 1, POLICY)).admitted, true);
    await one.charge('owner', 500, POLICY);
    const refused = await two.take('owner', 1, POLICY);
    assert.equal(refused.admitted, false);
    assert.ok(!refused.admitted && refused.retryAfterMs > 40_000, 'owes about 400 units: 40 s of refill');
    assert.equal((await two.standing('owner', POLICY)).remaining, 0);
    await client.del(`${prefix}owner`);
  });

  it("keeps each instance's own buckets while Redis is cut, and shares again once it is back", async () => {
    const url = new URL(testRedisUrl as string);
    const proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 6379) });
    const viaProxy = createRedis(`redis://${proxy.host}:${proxy.port}`);
    // The cut makes the connection fail: the buckets fall back, and the client's own errors are expected.
    viaProxy.on('error', () => undefined);
    await viaProxy.connect();
    try {
      const prefix = fresh();
      const buckets = createRedisBuckets(viaProxy, prefix, log);
      const policy = { capacity: 10, windowMs: 600_000 };
      assert.equal((await buckets.take('owner', 1, policy)).admitted, true);
      proxy.cut();
      // The reservation and then the instance's own bucket: never a failure, never more than a capacity.
      const during = await Promise.all(Array.from({ length: 30 }, () => buckets.take('cut', 1, policy)));
      assert.equal(during.filter((take) => take.admitted).length, 10);
      proxy.restore();
      await eventually('Redis reconnected', () => viaProxy.status === 'ready');
      await buckets.take('back', 1, policy);
      assert.equal(await client.exists(`${prefix}back`), 1, 'asks Redis again');
      await client.del(await client.keys(`${prefix}*`));
    } finally {
      viaProxy.disconnect();
      await proxy.close();
    }
  });

  it('remembers a refusal until the time it named, without asking again', async () => {
    const prefix = fresh();
    const buckets = createRedisBuckets(client, prefix, log);
    const policy = { capacity: 2, windowMs: 2000 };
    await buckets.take('owner', 2, policy);
    const refused = await buckets.take('owner', 1, policy);
    assert.equal(refused.admitted, false);
    await client.del(`${prefix}owner`); // Redis would now admit: the instance does not ask yet.
    assert.equal((await buckets.take('owner', 1, policy)).admitted, false);
    await sleep(1100);
    assert.equal((await buckets.take('owner', 1, policy)).admitted, true);
    await client.del(`${prefix}owner`);
  });
});
