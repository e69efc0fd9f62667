import { setImmediate } from 'node:timers/promises';

/**
 * Time that passes only when the test says so. `sleep` resolves once `advance` has moved the time past its
 * end; `advance` lets each sleeper that wakes run (and sleep again) before moving on.
 */
export function createFakeClock(start = 1_000_000) {
  let time = start;
  const sleepers: { until: number; wake: () => void }[] = [];
  const settle = async () => {
    for (let turn = 0; turn < 5; turn++) await setImmediate();
  };
  const sleep = (ms: number): Promise<void> =>
    new Promise((wake) => sleepers.push({ until: time + ms, wake }));
  return {
    now: () => time,
    sleep,
    /** Calls `tick` every `ms` of this time until the function it returns is called (a fake setInterval). */
    every(ms: number, tick: () => void): () => void {
      let stopped = false;
      void (async () => {
        for (;;) {
          await sleep(ms);
          if (stopped) return;
          tick();
        }
      })();
      return () => {
        stopped = true;
      };
    },
    async advance(ms: number): Promise<void> {
      const target = time + ms;
      for (;;) {
        await settle();
        sleepers.sort((a, b) => a.until - b.until);
        const next = sleepers[0];
        if (!next || next.until > target) break;
        sleepers.shift();
        time = next.until;
        next.wake();
      }
      time = target;
      await settle();
    },
  };
}
