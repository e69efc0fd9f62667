import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeEntry, encodeEntry } from '../../../src/platform/cache/cache.js';
import { createMemoryCache } from '../../../src/platform/cache/memory-cache.js';

describe('cache entries as bytes', () => {
  it('round-trips, the value copied out of the buffer it arrived in (nothing else is held)', () => {
    const value = Buffer.from('{"player":"x"}');
    const encoded = encodeEntry({ storedAt: 1_795_438_392_123, bytes: value });
    // As a client library hands a reply over: a slice of a larger read buffer.
    const readBuffer = Buffer.alloc(encoded.length * 3);
    encoded.copy(readBuffer, 10);
    const decoded = decodeEntry(readBuffer.subarray(10, 10 + encoded.length));
    assert.equal(decoded?.storedAt, 1_795_438_392_123);
    assert.deepEqual(decoded?.bytes, value);
    assert.notEqual(decoded?.bytes.buffer, readBuffer.buffer);
    assert.equal(decoded?.bytes.buffer.byteLength, value.length, 'not a slice of a shared pool either');
  });

  it('keeps in process only bytes of their own, whatever buffer they came in', async () => {
    const cache = createMemoryCache(1024 * 1024);
    // Under 4 KiB, Buffer.from slices Node's shared 8 KiB pool; subarray views a larger buffer.
    const pooled = Buffer.from('{"player":"small"}');
    assert.ok(pooled.buffer.byteLength > pooled.length, 'this Node pools small buffers');
    const view = Buffer.alloc(10_000, 'x').subarray(100, 5100);
    const own = Buffer.allocUnsafeSlow(3);
    for (const [key, bytes] of [
      ['pooled', pooled],
      ['view', view],
      ['own', own],
    ] as const) {
      await cache.set(key, { storedAt: 1, bytes }, 60_000);
      const kept = await cache.get(key);
      assert.deepEqual(kept?.bytes, bytes, key);
      assert.equal(kept?.bytes.buffer.byteLength, bytes.length, `${key}: held by its own length`);
    }
    assert.equal((await cache.get('own'))?.bytes, own, 'bytes of their own are kept as they are');
  });

  it('refuses bytes too short to hold the header', () => {
    assert.equal(decodeEntry(Buffer.alloc(7)), undefined);
  });
});
