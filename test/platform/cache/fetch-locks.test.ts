import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import Fastify from 'fastify';
import { Redis } from 'ioredis';
import { FAILURE_NOTE_MS, type FetchLocks } from '../../../src/platform/cache/fetch-locks.js';
import { createMemoryLocks } from '../../../src/platform/cache/memory-locks.js';
import { createRedisLocks } from '../../../src/platform/cache/redis-locks.js';
import { createRedis } from '../../../src/platform/redis.js';
import { testRedisUrl } from '../../helpers/environment.js';

const redis = testRedisUrl ? new Redis(testRedisUrl) : undefined;
after(() => redis?.quit());
// A logger that writes nothing: the locks log only when Redis fails.
const log = Fastify().log;

const kinds: [string, () => FetchLocks][] = [['memory', () => createMemoryLocks()]];
if (redis) {
  kinds.push(['redis', () => createRedisLocks(redis, `test:locks:${randomBytes(6).toString('hex')}:`, log)]);
}

for (const [kind, make] of kinds) {
  describe(`fetch locks (${kind})`, () => {
    it('give the lock to one taker at a time, and tell who holds it', async () => {
      const locks = make();
      const lease = await locks.acquire('k', 5000);
      assert.ok(lease);
      assert.equal(await locks.acquire('k', 5000), undefined);
      assert.equal(await locks.holder('k'), lease.token);
      assert.ok(await locks.acquire('other', 5000), 'keys are apart');
      await lease.release();
      assert.equal(await locks.holder('k'), undefined);
      assert.ok(await locks.acquire('k', 5000), 'free again after release');
    });

    it("leave the failed holder's note for those who waited on it, under that holder only", async () => {
      const locks = make();
      const lease = await locks.acquire('k', 5000);
      assert.ok(lease);
      await lease.release(Buffer.from('it failed'));
      assert.equal((await locks.failureOf('k', lease.token))?.toString(), 'it failed');
      assert.equal(await locks.failureOf('k', 'another-holder'), undefined);
      assert.ok(FAILURE_NOTE_MS > 0);
    });

    it('let a lock lapse after its time, and a lapsed lease cannot release the next holder', async () => {
      const locks = make();
      const first = await locks.acquire('k', 30);
      assert.ok(first);
      await new Promise((resolve) => setTimeout(resolve, 60));
      const second = await locks.acquire('k', 5000);
      assert.ok(second, 'the lapsed lock can be taken');
      await first.release();
      assert.equal(
        await locks.holder('k'),
        second.token,
        "the first holder's release leaves the second's lock",
      );
    });
  });
}

describe('fetch locks with Redis down', () => {
  it('hand out a lease that does nothing (callers go ahead), and know no holder', async (t) => {
    const dead = createRedis('redis://127.0.0.1:1');
    dead.on('error', () => undefined);
    t.after(() => dead.disconnect());
    const locks = createRedisLocks(dead, 'test:', log);
    const lease = await locks.acquire('k', 5000);
    assert.ok(lease);
    await lease.release(Buffer.from('x'));
    assert.equal(await locks.holder('k'), undefined);
    assert.equal(await locks.failureOf('k', lease.token), undefined);
  });
});
