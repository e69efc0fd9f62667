import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLocalInvalidationFeed, watchingChangeMark } from '../../../src/platform/cache/invalidation.js';

describe('a feed watching a change mark', () => {
  it('is trusted only once the mark was read, and resets its listeners when the mark moved', async () => {
    let mark = 7;
    const feed = watchingChangeMark(createLocalInvalidationFeed(), async () => mark);
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

  it('keeps its trust and its mark when a read fails', async () => {
    let failing = false;
    const feed = watchingChangeMark(createLocalInvalidationFeed(), async () => {
      if (failing) throw new Error('database down');
      return 1;
    });
    await feed.check();
    failing = true;
    await assert.rejects(feed.check(), /database down/);
    assert.equal(feed.trusted(), true);
  });
});
