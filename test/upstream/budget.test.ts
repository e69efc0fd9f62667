import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import Fastify from 'fastify';
import { Redis } from 'ioredis';
import { type BudgetOptions, createMemoryBudget, type RateBudget } from '../../src/upstream/budget.js';
import { createRedisBudget } from '../../src/upstream/budget-redis.js';
import { describeOrSkip } from '../helpers/backends.js';
import { skipWithoutRedis, testRedisUrl } from '../helpers/environment.js';
import { createFakeClock } from '../helpers/fake-clock.js';
import { keySpaces } from '../helpers/redis-keys.js';

const redis = testRedisUrl ? new Redis(testRedisUrl) : undefined;
const spaces = keySpaces('budget');
after(async () => {
  if (redis) await spaces.drop(redis);
  await redis?.quit();
});

/** A budget, and how the test lets its time pass: a fake clock in process, real time on Redis's clock. */
type Make = (options: BudgetOptions) => { budget: RateBudget; advance(ms: number): Promise<void> };

const kinds: [string, Make][] = [
  [
    'memory',
    (options) => {
      const clock = createFakeClock();
      return { budget: createMemoryBudget(options, clock), advance: clock.advance };
    },
  ],
];
// A logger that writes nothing: the budget logs only when Redis fails.
const log = Fastify().log;
const key = () => spaces.fresh();
// Listed without Redis too, for its suite to be reported as skipped: `make` is only called when it runs.
kinds.push([
  'redis',
  (options) => ({
    budget: createRedisBudget(redis as Redis, key(), options, log),
    advance: (ms) => sleep(ms),
  }),
]);

async function grant(budget: RateBudget): Promise<string> {
  const result = await budget.take();
  assert.ok(result.granted, 'expected a grant');
  return result.ticket;
}

for (const [kind, make] of kinds) {
  describeOrSkip(`rate budget (${kind})`, { skip: kind === 'redis' && skipWithoutRedis }, () => {
    it('sends one probe until the upstream tells its limit, then spends what it said', async () => {
      const { budget, advance } = make({ windowMs: 60_000, holdMs: 2000 });
      const probe = await grant(budget);
      let waiterGranted: boolean | undefined;
      const waiter = budget.take().then((result) => {
        waiterGranted = result.granted;
        return result;
      });
      await advance(50);
      assert.equal(waiterGranted, undefined, 'a second request waits while the probe is out');
      await budget.settle(probe, { limit: 3, remaining: 2, resetSeconds: 60 });
      await advance(20);
      const second = await waiter;
      assert.ok(second.granted);
      await grant(budget);
      const denied = await budget.take();
      assert.equal(denied.granted, false);
      if (!denied.granted) assert.ok(denied.retryAfterMs > 55_000 && denied.retryAfterMs <= 60_000);
      assert.equal(await budget.remaining(), 0);
    });

    it('waits no longer than the hold time on a probe that never answers', async () => {
      const { budget, advance } = make({ windowMs: 60_000, holdMs: 200 });
      await grant(budget);
      const waiter = budget.take();
      await advance(250);
      const result = await waiter;
      // In process a ticket cannot be lost, so the probe is still out: no grant. In Redis a ticket lapses
      // after the hold time (its instance may have died), and the waiter goes out as the new probe.
      assert.equal(result.granted, kind === 'redis');
    });

    it('lowers what is left by what the upstream says, less the requests still in flight', async () => {
      const { budget } = make({ windowMs: 60_000, holdMs: 2000 });
      await budget.settle(await grant(budget), { limit: 10, remaining: 9, resetSeconds: 60 });
      const first = await grant(budget);
      await grant(budget); // still in flight when the first answer arrives
      await budget.settle(first, { remaining: 4 });
      assert.equal(await budget.remaining(), 3);
    });

    it('never raises what is left within a window: a late answer saying more is not believed', async () => {
      const { budget } = make({ windowMs: 60_000, holdMs: 2000 });
      await budget.settle(await grant(budget), { limit: 60, remaining: 50, resetSeconds: 60 });
      const early = await grant(budget);
      const late = await grant(budget);
      await budget.settle(late, { remaining: 5 });
      // The answer to the earlier request arrives last, with what the upstream had left before.
      await budget.settle(early, { remaining: 47 });
      assert.ok(Number(await budget.remaining()) <= 5, `${await budget.remaining()} left`);
    });

    it('after a 429, sends nothing until the reset, then the full limit again', async () => {
      const { budget, advance } = make({ windowMs: 60_000, holdMs: 2000 });
      await budget.settle(await grant(budget), { limit: 5, remaining: 4, resetSeconds: 60 });
      await budget.settle(await grant(budget), { throttled: true, resetSeconds: 1 });
      assert.equal((await budget.take()).granted, false);
      await advance(1100);
      await grant(budget);
      assert.equal(await budget.remaining(), 4);
    });

    it('keeps a static limit per window when the upstream sends none (Mojang)', async () => {
      const { budget, advance } = make({ limit: 2, windowMs: 300, holdMs: 2000 });
      await budget.settle(await grant(budget), {});
      await budget.settle(await grant(budget), {});
      assert.equal((await budget.take()).granted, false);
      await advance(350);
      await grant(budget);
    });
  });
}

describeOrSkip('rate budget (redis): nothing left behind', { skip: skipWithoutRedis }, () => {
  it('lets its keys lapse: the window two times over, a pause the upstream asked for beyond it', async () => {
    const client = redis as Redis;
    const name = key();
    const budget = createRedisBudget(client, name, { windowMs: 300, holdMs: 2000 }, log);
    const ticket = await grant(budget);
    const hold = await client.pttl(`${name}:in-flight`);
    assert.ok(hold > 0 && hold <= 2000, `the tickets lapse with the last hold (${hold} ms)`);
    await budget.settle(ticket, { limit: 10, remaining: 9, resetSeconds: 60 });
    const kept = await client.pttl(name);
    assert.ok(kept > 60_000 && kept <= 60_300, `kept past the reset the upstream gave (${kept} ms)`);
    const other = `${key()}`;
    const quiet = createRedisBudget(client, other, { limit: 5, windowMs: 300, holdMs: 2000 }, log);
    await quiet.settle(await grant(quiet), {});
    const lapse = await client.pttl(other);
    assert.ok(lapse > 0 && lapse <= 600, `two windows after its last use (${lapse} ms)`);
    await sleep(700);
    assert.equal(await client.exists(other, `${other}:in-flight`), 0, 'gone once lapsed');
  });
});
