import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { DayAggregate } from '../../../src/modules/ping/ping.repository.js';
import { averageOf } from '../../../src/modules/ping/ping.service.js';
import { addSamples } from '../../../src/modules/ping/ping-writes.service.js';
import { expectedDays, type SentSample } from './ping-app.js';

const DAY_START = Date.UTC(2026, 10, 22);
const sample = fc.record({
  ping: fc.integer({ min: 0, max: 60_000 }),
  lobby: fc.constantFrom('a', 'b', 'c'),
  // Few distinct times, so that equal times (and their order) are exercised.
  at: fc.integer({ min: 0, max: 50 }).map((minute) => DAY_START + minute * 60_000),
});

describe('a day kept on write', () => {
  it('says what the samples say, whatever batches they came in and however late', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(sample, { minLength: 1, maxLength: 30 }), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 60 }),
        (batches, cap) => {
          let day: DayAggregate | undefined;
          for (const batch of batches) day = addSamples(day, '2026-11-22', batch, cap);
          const [expected] = expectedDays(batches.flat() as SentSample[], cap);
          assert.ok(day && expected);
          assert.deepEqual(
            {
              avg: averageOf(day.total, day.samples),
              min: day.min,
              max: day.max,
              date: day.day,
              history: day.history,
              last_lobby: day.lastLobby,
              last_ping: new Date(day.lastAt).toISOString(),
            },
            expected,
          );
          assert.equal(day.historyAt.length, day.history.length);
        },
      ),
      { numRuns: 500, seed: 20261123 },
    );
  });

  it('rounds the mean half up to 2 decimals, exactly', () => {
    assert.equal(averageOf(1, 8), 0.13, '0.125');
    assert.equal(averageOf(2, 3), 0.67);
    assert.equal(averageOf(1, 3), 0.33);
    assert.equal(averageOf(10_050, 1000), 10.05);
    assert.equal(averageOf(60_000 * 1_000_000, 1_000_000), 60_000);
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 60_000 * 10_000 }),
        fc.integer({ min: 1, max: 10_000 }),
        (total, count) => {
          const hundredths = (BigInt(total) * 200n + BigInt(count)) / (2n * BigInt(count));
          assert.equal(averageOf(total, count), Number(hundredths) / 100);
        },
      ),
      { numRuns: 2000, seed: 7 },
    );
  });
});
