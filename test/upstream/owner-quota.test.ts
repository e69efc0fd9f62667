import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import Fastify from 'fastify';
import { Redis } from 'ioredis';
import { createMemoryQuota, guarded, type OwnerQuota } from '../../src/upstream/owner-quota.js';
import { createRedisQuota } from '../../src/upstream/owner-quota-redis.js';
import { describeOrSkip } from '../helpers/backends.js';
import { skipWithoutRedis, testRedisUrl } from '../helpers/environment.js';
import { keySpaces } from '../helpers/redis-keys.js';

const redis = testRedisUrl ? new Redis(testRedisUrl) : undefined;
const spaces = keySpaces('quota');
after(async () => {
  if (redis) await spaces.drop(redis);
  await redis?.quit();
});
const WINDOW_MS = 60_000;
const options = { sharePercent: 25, windowMs: WINDOW_MS };
// Writes nothing: the quota logs only when Redis fails or a quota runs out.
const silent = Fastify().log;

async function takeAll(quota: OwnerQuota, owner: bigint, count: number): Promise<number> {
  let allowed = 0;
  for (let index = 0; index < count; index++) if ((await quota.take(owner)).allowed) allowed += 1;
  return allowed;
}

describe('owner quota (memory)', () => {
  it('allows a quarter of the key per owner per window, and starts again when the window ends', async () => {
    let now = 1_000_000;
    const quota = createMemoryQuota(
      options,
      async () => 10,
      () => now,
    );
    assert.equal(await takeAll(quota, 1n, 5), 2, 'floor(10 x 25 %) = 2');
    assert.equal(await takeAll(quota, 2n, 5), 2, 'each owner has their own');
    const refused = await quota.take(1n);
    assert.deepEqual(refused, {
      allowed: false,
      status: { limit: 2, remaining: 0, resetSeconds: 60, windowSeconds: 60 },
    });
    now += WINDOW_MS - 1;
    assert.equal((await quota.take(1n)).allowed, false);
    now += 1;
    assert.equal(await takeAll(quota, 1n, 5), 2, 'a new window');
  });

  it('gives a charge back only for a lookup that sent nothing', async () => {
    const quota = createMemoryQuota(options, async () => 8);
    await quota.take(1n);
    await quota.take(1n);
    await quota.settle(1n, true);
    await quota.settle(1n, false);
    assert.equal((await quota.status(1n))?.remaining, 1);
  });

  it('never refuses, and tells no standing, while the key limit is unknown; a tiny key still allows one', async () => {
    let keyLimit: number | undefined;
    const quota = createMemoryQuota(options, async () => keyLimit);
    assert.equal(await takeAll(quota, 1n, 5), 5);
    assert.equal(await quota.status(1n), undefined);
    keyLimit = 1;
    assert.deepEqual(await quota.status(1n), {
      limit: 1,
      remaining: 0,
      resetSeconds: 60,
      windowSeconds: 60,
    });
  });
});

describe('owner quota guard', () => {
  it("lets an owner's lookups out one at a time until the key limit is known, then counts them", async () => {
    let keyLimit: number | undefined;
    const quota = guarded(
      createMemoryQuota(options, async () => keyLimit),
      { keyLimit: async () => keyLimit, holdMs: 5000, log: silent },
    );
    const first = await quota.take(1n);
    assert.ok(first.allowed);
    let settled = 0;
    const waiting = Array.from({ length: 20 }, () =>
      quota.take(1n).then((taken) => {
        settled += 1;
        return taken;
      }),
    );
    await sleep(50);
    assert.equal(settled, 0, 'the others wait while the first is out and the limit unknown');
    assert.ok((await quota.take(2n)).allowed, 'another owner is not held up');
    keyLimit = 12;
    await quota.settle(1n, true);
    const results = await Promise.all(waiting);
    assert.equal(results.filter((taken) => taken.allowed).length, 2, 'floor(12 x 25 %) = 3, one used');
  });
});

describeOrSkip('owner quota (redis)', { skip: skipWithoutRedis }, () => {
  const keys = () => {
    const prefix = spaces.fresh();
    return { keyPrefix: `${prefix}owner:`, budgetKey: `${prefix}budget` };
  };
  const make = (where: ReturnType<typeof keys>, now?: () => number) =>
    createRedisQuota(redis as Redis, where, options, async () => undefined, silent, now);

  it('is one count for every instance, sized from the shared budget hash', async () => {
    const where = keys();
    await redis?.hset(where.budgetKey, 'limit', 20);
    let clock = Date.now();
    const [one, two] = [make(where), make(where, () => clock)];
    const allowed = await Promise.all([takeAll(one, 1n, 10), takeAll(two, 1n, 10)]);
    assert.equal(allowed[0] + allowed[1], 5, 'floor(20 x 25 %) over both');
    assert.equal(await redis?.exists(`${where.keyPrefix}1`), 1, "the owner's count is keyed by its digits");
    const status = await two.status(1n);
    assert.equal(status?.limit, 5);
    assert.equal(status?.remaining, 0);
    assert.ok(status && status.resetSeconds >= 59 && status.resetSeconds <= 60);
    await one.settle(1n, false);
    assert.equal((await one.status(1n))?.remaining, 1, 'the instance that gave it back sees it at once');
    // The other reuses the standing it read for its headers for up to a second, then reads it again.
    clock += 999;
    assert.equal((await two.status(1n))?.remaining, 0);
    clock += 1;
    assert.equal((await two.status(1n))?.remaining, 1);
    assert.equal(
      await takeAll(two, 1n, 3),
      1,
      'one count: the charge given back by one is taken by the other',
    );
  });

  it('tells no standing and refuses nothing until the budget has learnt the limit', async () => {
    const quota = make(keys());
    assert.equal(await takeAll(quota, 1n, 10), 10);
    assert.equal(await quota.status(1n), undefined);
  });

  it('falls back on an in-process quota when Redis fails', async (t) => {
    const broken = new Redis({
      port: 1,
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
    });
    t.after(() => broken.disconnect());
    const warnings: unknown[] = [];
    const log = { ...silent, warn: (...line: unknown[]) => warnings.push(line) } as typeof silent;
    const quota = createRedisQuota(broken, keys(), options, async () => 4, log);
    assert.equal(await takeAll(quota, 1n, 3), 1, 'floor(4 x 25 %) = 1, counted in process');
    assert.equal((await quota.status(1n))?.remaining, 0);
    assert.equal(warnings.length, 1, 'the failure is logged once, not on every call');
  });
});
