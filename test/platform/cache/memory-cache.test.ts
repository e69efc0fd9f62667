import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMemoryCache, ENTRY_OVERHEAD_BYTES } from '../../../src/platform/cache/memory-cache.js';

describe('the in-process cache’s bound', () => {
  it('counts each entry’s key, value and bookkeeping: long keys of small values fill it as their size says', async () => {
    const key = (index: number) => `${String(index)}:${'k'.repeat(2000)}`;
    const value = Buffer.alloc(10, 1);
    const size = value.length + key(0).length + ENTRY_OVERHEAD_BYTES;
    const cache = createMemoryCache(3 * size);
    for (let index = 0; index < 4; index++)
      await cache.set(key(index), { bytes: value, storedAt: 0 }, 60_000);
    assert.equal(await cache.get(key(0)), undefined, 'the fourth entry pushed out the least recently used');
    for (let index = 1; index < 4; index++) assert.ok(await cache.get(key(index)), `entry ${index} kept`);
  });
});
