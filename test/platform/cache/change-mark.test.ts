import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLocalInvalidationFeed, watchingChangeMark } from '../../../src/platform/cache/invalidation.js';

describe('a feed watching a change mark', () => {
  it('is trusted only once the mark was read, and resets its listeners when the mark moved', async () => {
    let mark = 7;
    const feed = watchingChangeMark(createLocalInvalidationFeed(), async () => mark, 3000);
    const heard: string[] = [];
    feed.listen({ invalidated: (keys) => heard.push(...keys), reset: () => heard.push('reset') });
    assert.equal(feed.trusted(), false, 'before the first read');
    await feed.check();
    assert.equal(feed.trusted(), true);
    assert.deepEqual(heard, [], 'the first read sets the mark; nothing was kept before it');
    await feed.check();
    assert.deepEqual(heard, [], 'unchanged');
    mark = 8;
    await feed.check();
    assert.deepEqual(heard, ['reset']);
    await feed.publish(['chain']);
    assert.deepEqual(heard, ['reset', 'chain'], 'what the feed tells still arrives');
  });

  it('stops trusting when the mark has not been read for a while (reads failing), and trusts again after a read', async () => {
    let clock = 0;
    let failing = false;
    const feed = watchingChangeMark(
      createLocalInvalidationFeed(),
      async () => {
        if (failing) throw new Error('database down');
        return 1;
      },
      3000,
      { now: () => clock },
    );
    await feed.check();
    failing = true;
    clock = 1000;
    await assert.rejects(feed.check(), /database down/);
    assert.equal(feed.trusted(), true, 'read 1 s ago');
    clock = 3000;
    assert.equal(feed.trusted(), false, 'read 3 s ago: copies are not used');
    failing = false;
    await feed.check();
    assert.equal(feed.trusted(), true);
  });

  it("keeps trusting through an outage of the mark's store when the feed carries other instances' changes, only after a first read", async () => {
    let clock = 0;
    let down = true;
    const outage = new Error('connect ECONNREFUSED');
    // A feed between instances (Redis's): what another instance changes meanwhile arrives through it.
    const betweenInstances = { ...createLocalInvalidationFeed(), reachesOtherInstances: true };
    const feed = watchingChangeMark(
      betweenInstances,
      async () => {
        if (down) throw outage;
        return 1;
      },
      3000,
      { now: () => clock, isOutage: (error) => error === outage },
    );
    await assert.rejects(feed.check());
    assert.equal(feed.trusted(), false, 'never read: an outage at start trusts nothing');
    down = false;
    await feed.check();
    down = true;
    clock = 60_000;
    await assert.rejects(feed.check());
    assert.equal(feed.trusted(), true, 'the store is unreachable: the mark cannot move either');
    down = false;
    await feed.check();
    clock = 120_000;
    assert.equal(feed.trusted(), false, 'reachable again, and not read for a while: not trusted');
  });

  it('stops trusting through an outage when the feed reaches no other instance: another may still write', async () => {
    let clock = 0;
    let down = false;
    const outage = new Error('connect ECONNREFUSED');
    const feed = watchingChangeMark(
      createLocalInvalidationFeed(),
      async () => {
        if (down) throw outage;
        return 1;
      },
      3000,
      { now: () => clock, isOutage: (error) => error === outage },
    );
    await feed.check();
    down = true;
    clock = 1000;
    await assert.rejects(feed.check());
    assert.equal(feed.trusted(), true, 'read 1 s ago');
    clock = 3000;
    await assert.rejects(feed.check());
    assert.equal(feed.trusted(), false, 'an outage of this instance alone tells nothing of the others');
  });

  it('joins a check under way instead of reading again', async () => {
    let reads = 0;
    let answer: (mark: number) => void = () => undefined;
    const feed = watchingChangeMark(
      createLocalInvalidationFeed(),
      () => {
        reads++;
        return new Promise<number>((resolve) => {
          answer = resolve;
        });
      },
      3000,
    );
    const first = feed.check();
    const second = feed.check();
    answer(1);
    await Promise.all([first, second]);
    assert.equal(reads, 1);
  });
});
