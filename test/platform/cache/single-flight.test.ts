import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSingleFlight } from '../../../src/platform/cache/single-flight.js';

/** A piece of work that finishes when the test says so. */
function controlled<T>() {
  let finish!: (value: T) => void;
  let fail!: (error: Error) => void;
  let runs = 0;
  const promise = new Promise<T>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  return {
    work: () => {
      runs += 1;
      return promise;
    },
    finish: (value: T) => finish(value),
    fail: (error: Error) => fail(error),
    runs: () => runs,
  };
}

describe('single-flight', () => {
  it('runs the work once for concurrent callers of one key: the first leads, the others join', async () => {
    const flights = createSingleFlight();
    const job = controlled<string>();
    const calls = Array.from({ length: 5 }, () => flights.run('k', job.work));
    job.finish('done');
    const results = await Promise.all(calls);
    assert.equal(job.runs(), 1);
    assert.deepEqual(
      results.map((result) => [result.value, result.joined]),
      [['done', false], ...Array(4).fill(['done', true])],
    );
  });

  it('gives every caller the failure, and forgets the key afterwards', async () => {
    const flights = createSingleFlight();
    const job = controlled<string>();
    const calls = [flights.run('k', job.work), flights.run('k', job.work)];
    job.fail(new Error('boom'));
    for (const result of await Promise.allSettled(calls)) {
      assert.equal(result.status, 'rejected');
      assert.equal(result.status === 'rejected' && (result.reason as Error).message, 'boom');
    }
    const after = await flights.run('k', async () => 'again');
    assert.deepEqual(after, { value: 'again', joined: false }, 'a later call runs the work anew');
  });

  it('keeps keys apart', async () => {
    const flights = createSingleFlight();
    const [a, b] = [controlled<string>(), controlled<string>()];
    const calls = [flights.run('a', a.work), flights.run('b', b.work)];
    b.finish('b');
    a.finish('a');
    assert.deepEqual(
      (await Promise.all(calls)).map((result) => result.value),
      ['a', 'b'],
    );
    assert.equal(a.runs() + b.runs(), 2);
  });
});
