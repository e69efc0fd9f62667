import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { timeOrderedUuid } from '../../src/platform/time-ordered-id.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('timeOrderedUuid', () => {
  it('is a version 7 UUID whose first 48 bits are the given epoch milliseconds', () => {
    for (const at of [0, 1, 1_795_438_392_123, 2 ** 48 - 1]) {
      const id = timeOrderedUuid(at);
      assert.match(id, UUID_V7);
      assert.equal(Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16), at);
    }
  });

  it('sorts as text in the order of its times, and differs within one millisecond', () => {
    const times = [
      1_700_000_000_000, 1_700_000_000_001, 1_700_000_000_255, 1_700_000_000_256, 1_800_000_000_000,
    ];
    const ids = times.map((at) => timeOrderedUuid(at));
    assert.deepEqual([...ids].sort(), ids);
    const sameMillisecond = new Set(Array.from({ length: 1000 }, () => timeOrderedUuid(1_700_000_000_000)));
    assert.equal(sameMillisecond.size, 1000);
  });
});
