import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import Fastify from 'fastify';
import { Redis } from 'ioredis';
import {
  FAILURE_NOTE_MS,
  type FetchLease,
  type FetchLocks,
  type HeldBy,
} from '../../../src/platform/cache/fetch-locks.js';
import { createRedisLocks } from '../../../src/platform/cache/redis-locks.js';
import { createRedis } from '../../../src/platform/redis.js';
import { describeOrSkip } from '../../helpers/backends.js';
import { skipWithoutRedis, testRedisUrl } from '../../helpers/environment.js';
import { createMemoryLocks } from '../../helpers/memory-locks.js';
import { keySpaces } from '../../helpers/redis-keys.js';

const redis = testRedisUrl ? new Redis(testRedisUrl) : undefined;
const spaces = keySpaces('locks');
after(async () => {
  if (redis) await spaces.drop(redis);
  await redis?.quit();
});
// A logger that writes nothing: the locks log only when Redis fails.
const log = Fastify().log;

/** Locks, how the test lets time pass for them, and how long a failure note of `key` still lives (ms). */
interface Kind {
  readonly locks: FetchLocks;
  advance(ms: number): Promise<unknown>;
  noteLifetime(key: string, token: string): Promise<number>;
}

const kinds: [string, () => Kind][] = [
  [
    'memory',
    () => {
      const clock = { now: 1_000_000 };
      const locks = createMemoryLocks(() => clock.now);
      return {
        locks,
        advance: async (ms) => {
          clock.now += ms;
        },
        // The note lives until it is gone: look just before and at its end.
        noteLifetime: async (key, token) => {
          clock.now += FAILURE_NOTE_MS - 1;
          const before = await locks.failureOf(key, token);
          clock.now += 1;
          const after = await locks.failureOf(key, token);
          return before && !after ? FAILURE_NOTE_MS : -1;
        },
      };
    },
  ],
];
// Listed without Redis too, for its suite to be reported as skipped: `make` is only called when it runs.
kinds.push([
  'redis',
  () => {
    const client = redis as Redis;
    const prefix = spaces.fresh();
    return {
      locks: createRedisLocks(client, prefix, log),
      advance: (ms) => sleep(ms),
      noteLifetime: (key, token) => client.pttl(`${prefix}failed:${key}:${token}`),
    };
  },
]);

function lease(taken: FetchLease | HeldBy): FetchLease {
  assert.ok('release' in taken, `expected the lock, but it is held by ${'heldBy' in taken && taken.heldBy}`);
  return taken;
}

for (const [name, make] of kinds) {
  describeOrSkip(`fetch locks (${name})`, { skip: name === 'redis' && skipWithoutRedis }, () => {
    it('give the lock to one taker at a time, and tell the others who holds it', async () => {
      const { locks } = make();
      const first = lease(await locks.acquire('k', 5000));
      assert.deepEqual(await locks.acquire('k', 5000), { heldBy: first.token });
      assert.equal(await locks.holder('k'), first.token);
      lease(await locks.acquire('other', 5000));
      await first.release();
      assert.equal(await locks.holder('k'), undefined);
      lease(await locks.acquire('k', 5000));
    });

    it("leave the failed holder's note for those who waited on it, under that holder only, for a short while", async () => {
      const { locks, noteLifetime } = make();
      const holder = lease(await locks.acquire('k', 5000));
      await holder.release(Buffer.from('it failed'));
      assert.equal(await locks.holder('k'), undefined, 'the lock is free');
      assert.equal((await locks.failureOf('k', holder.token))?.toString(), 'it failed');
      assert.equal(await locks.failureOf('k', 'another-holder'), undefined);
      const lifetime = await noteLifetime('k', holder.token);
      assert.ok(lifetime > 0 && lifetime <= FAILURE_NOTE_MS, `the note lives ${lifetime} ms`);
    });

    it('let a lock lapse after its time, and a lapsed lease cannot release the next holder', async () => {
      const { locks, advance } = make();
      const first = lease(await locks.acquire('k', 30));
      await advance(60);
      const second = lease(await locks.acquire('k', 5000));
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
    const taken = lease(await locks.acquire('k', 5000));
    await taken.release(Buffer.from('x'));
    assert.equal(await locks.holder('k'), undefined);
    assert.equal(await locks.failureOf('k', taken.token), undefined);
  });
});
