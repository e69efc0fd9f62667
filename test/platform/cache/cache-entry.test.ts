import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeEntry, encodeEntry } from '../../../src/platform/cache/cache.js';

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
  });

  it('refuses bytes too short to hold the header', () => {
    assert.equal(decodeEntry(Buffer.alloc(7)), undefined);
  });
});
