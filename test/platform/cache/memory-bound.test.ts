import assert from 'node:assert/strict';
import { it } from 'node:test';
import v8 from 'node:v8';
import vm from 'node:vm';
import { createMemoryCache } from '../../../src/platform/cache/memory-cache.js';

/*
 * The in-process cache's bound is memory, not a count of values: what it keeps (values, keys, each entry's
 * objects and slots) stays within it, measured on this process's heap and buffers after a full collection.
 */

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const MiB = 1024 * 1024;
const BOUND = 8 * MiB;

/** Heap and Buffers in use once every collectable thing is collected. */
function held(): number {
  gc();
  gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}

for (const valueBytes of [10, 100, 1000, 8000]) {
  it(`holds no more than its bound filled far past it with ${valueBytes}-byte values`, async () => {
    const before = held();
    const cache = createMemoryCache(BOUND);
    // Several times the bound, whatever the value size: most entries are let go.
    const entries = Math.ceil((4 * BOUND) / (valueBytes + 600));
    for (let index = 0; index < entries; index++) {
      const key = `player:${index.toString(16).padStart(32, '0')}`;
      await cache.set(key, { bytes: Buffer.alloc(valueBytes, index), storedAt: Date.now() }, 86_400_000);
    }
    const growth = held() - before;
    // The cache is still in use (not collected), and kept the latest.
    const last = await cache.get(`player:${(entries - 1).toString(16).padStart(32, '0')}`);
    assert.equal(last?.bytes.length, valueBytes);
    // 10% for what else the process allocated meanwhile (the runner's own): counted as 128 bytes an entry,
    // the 10-, 100- and 1000-byte values held 25.9, 20.1 and 11.3 MiB.
    assert.ok(growth <= BOUND * 1.1, `${(growth / MiB).toFixed(1)} MiB held for an 8 MiB bound`);
    assert.ok(
      growth >= BOUND * 0.5,
      `${(growth / MiB).toFixed(1)} MiB: the cache keeps what its bound allows`,
    );
  });
}
