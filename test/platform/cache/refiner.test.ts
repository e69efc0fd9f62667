import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setImmediate as turn } from 'node:timers/promises';
import { createRefiner } from '../../../src/platform/cache/refiner.js';

/** A refiner's job must not fail in these tests. */
const failOnError = (error: unknown) => assert.fail(String(error));

/** A job the test finishes by hand, and that says when it started. */
function heldJob(log: string[], name: string) {
  let finish: () => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  return {
    job: async () => {
      log.push(`start ${name}`);
      await done;
      log.push(`end ${name}`);
    },
    finish: () => finish(),
  };
}

/** A clock moved by hand, and pauses that say how long they were asked for and end when told. */
function fakeTime() {
  const time = { now: 0 };
  const pauses: { ms: number; end: () => void }[] = [];
  return {
    time,
    pauses,
    now: () => time.now,
    pause: (ms: number, signal: AbortSignal) =>
      new Promise<void>((resolve) => {
        pauses.push({ ms, end: resolve });
        signal.addEventListener('abort', () => resolve(), { once: true });
      }),
  };
}

describe('the background refiner', () => {
  it('runs one job at a time, in the order given, resting three times as long as a job ran at a 25% share', async () => {
    const log: string[] = [];
    const clock = fakeTime();
    const refiner = createRefiner({ maxQueued: 10, share: 0.25, onError: failOnError, ...clock });
    const a = heldJob(log, 'a');
    const b = heldJob(log, 'b');
    assert.ok(refiner.submit(a.job));
    assert.ok(refiner.submit(b.job));
    await turn();
    assert.deepEqual(log, ['start a'], 'b waits for a');
    clock.time.now += 40;
    a.finish();
    await turn();
    assert.deepEqual(log, ['start a', 'end a'], 'b waits out the rest');
    assert.deepEqual(
      clock.pauses.map((pause) => pause.ms),
      [120],
    );
    clock.time.now += 120;
    clock.pauses[0]?.end();
    await turn();
    assert.deepEqual(log, ['start a', 'end a', 'start b']);
    b.finish();
    await refiner.close();
  });

  it('makes a job submitted after a quiet spell still wait out the last job’s rest', async () => {
    const log: string[] = [];
    const clock = fakeTime();
    const refiner = createRefiner({ maxQueued: 10, share: 0.5, onError: failOnError, ...clock });
    const a = heldJob(log, 'a');
    refiner.submit(a.job);
    clock.time.now = 100;
    a.finish();
    await turn();
    // The queue is empty: nothing waits. A job submitted 30 ms later waits the 70 ms left of a's rest.
    clock.time.now = 130;
    const b = heldJob(log, 'b');
    refiner.submit(b.job);
    await turn();
    assert.deepEqual(log, ['start a', 'end a']);
    assert.deepEqual(
      clock.pauses.map((pause) => pause.ms),
      [70],
    );
    clock.pauses[0]?.end();
    await turn();
    assert.deepEqual(log, ['start a', 'end a', 'start b']);
    b.finish();
    await refiner.close();
  });

  it('drops what is submitted while the queue is full, and takes jobs again once it has room', async () => {
    const log: string[] = [];
    const refiner = createRefiner({ maxQueued: 2, share: 1, onError: failOnError });
    const running = heldJob(log, 'running');
    assert.ok(refiner.submit(running.job));
    await turn();
    const [w1, w2, w3] = [heldJob(log, 'w1'), heldJob(log, 'w2'), heldJob(log, 'w3')];
    assert.deepEqual(
      [w1, w2, w3].map(({ job }) => refiner.submit(job)),
      [true, true, false],
    );
    running.finish();
    await turn();
    assert.deepEqual(log, ['start running', 'end running', 'start w1']);
    const w4 = heldJob(log, 'w4');
    assert.ok(refiner.submit(w4.job), 'w1 left the queue: room for one');
    for (const held of [w1, w2, w4]) {
      held.finish();
      for (let i = 0; i < 3; i += 1) await turn();
    }
    await refiner.close();
    assert.deepEqual(log, [
      'start running',
      'end running',
      'start w1',
      'end w1',
      'start w2',
      'end w2',
      'start w4',
      'end w4',
    ]);
    assert.ok(!log.includes('start w3'), 'w3 was dropped');
  });

  it('goes on after a job that fails, telling of the failure', async () => {
    const failures: unknown[] = [];
    const refiner = createRefiner({ maxQueued: 4, share: 1, onError: (error) => failures.push(error) });
    let ran = false;
    refiner.submit(async () => {
      throw new Error('no');
    });
    refiner.submit(async () => {
      ran = true;
    });
    for (let i = 0; i < 5; i += 1) await turn();
    assert.equal(ran, true);
    assert.deepEqual(
      failures.map((error) => (error as Error).message),
      ['no'],
    );
    await refiner.close();
  });

  it('on close drops the waiting jobs, ends a rest at once, waits for the job under way and takes no more', async () => {
    const log: string[] = [];
    const clock = fakeTime();
    const refiner = createRefiner({ maxQueued: 4, share: 0.25, onError: failOnError, ...clock });
    const a = heldJob(log, 'a');
    const b = heldJob(log, 'b');
    refiner.submit(a.job);
    refiner.submit(b.job);
    await turn();
    let closed = false;
    const closing = refiner.close().then(() => {
      closed = true;
    });
    await turn();
    assert.equal(closed, false, 'waits for the job under way');
    clock.time.now += 10;
    a.finish();
    await closing;
    assert.deepEqual(log, ['start a', 'end a'], 'b was dropped');
    assert.equal(refiner.submit(heldJob(log, 'c').job), false);
  });

  it('on close ends a rest at once, without running what waited', async () => {
    const log: string[] = [];
    const clock = fakeTime();
    const refiner = createRefiner({ maxQueued: 4, share: 0.25, onError: failOnError, ...clock });
    const a = heldJob(log, 'a');
    refiner.submit(a.job);
    refiner.submit(heldJob(log, 'b').job);
    clock.time.now += 1000;
    a.finish();
    await turn();
    assert.deepEqual(
      clock.pauses.map((pause) => pause.ms),
      [3000],
      'b waits out 3 s of rest',
    );
    await refiner.close(); // resolves although the pause was never ended by the clock
    assert.deepEqual(log, ['start a', 'end a']);
  });

  it('rests on real timers by default, and a close cuts the rest short', async () => {
    const log: string[] = [];
    const refiner = createRefiner({ maxQueued: 4, share: 0.001, onError: failOnError });
    const a = heldJob(log, 'a');
    refiner.submit(a.job);
    refiner.submit(heldJob(log, 'b').job);
    await new Promise((resolve) => setTimeout(resolve, 20));
    a.finish(); // a ran 20 ms: b would wait about 20 s
    await turn();
    const closing = performance.now();
    await refiner.close();
    assert.ok(performance.now() - closing < 5000, 'the close did not wait out the rest');
    assert.deepEqual(log, ['start a', 'end a']);
  });
});
