import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Work that makes something already served better (a smaller compressed copy), run in the background one
 * job at a time, within a share of the time: after a job that took `d`, the next waits `d * (1 / share - 1)`.
 * What cannot wait is dropped, never queued without bound: a job submitted while `maxQueued` wait is not
 * taken (what it would have improved stays as it is).
 */
export interface Refiner {
  /** Queues `job`; false when the queue is full or the refiner closed (the job will not run). */
  submit(job: () => Promise<void>): boolean;
  /** Takes no more jobs, drops those waiting, and waits for the one running. */
  close(): Promise<void>;
}

export interface RefinerOptions {
  /** Jobs waiting at most; more are dropped. */
  readonly maxQueued: number;
  /** The share of the time jobs may run, above 0 and at most 1. */
  readonly share: number;
  /** Told of a job that failed (it is not retried). */
  readonly onError: (error: unknown) => void;
  readonly now?: () => number;
  /** Waits `ms`, or until `signal` aborts (the refiner closing); never rejects. */
  readonly pause?: (ms: number, signal: AbortSignal) => Promise<unknown>;
}

export function createRefiner({
  maxQueued,
  share,
  onError,
  now = performance.now.bind(performance),
  pause = (ms, signal) => sleep(ms, undefined, { ref: false, signal }).catch(() => undefined),
}: RefinerOptions): Refiner {
  const queue: (() => Promise<void>)[] = [];
  let running: Promise<void> | undefined;
  let closed = false;
  const closing = new AbortController();

  /** When the next job may start: a job's run is followed by its share of rest, queued or not. */
  let nextAt = Number.NEGATIVE_INFINITY;

  async function drain(): Promise<void> {
    try {
      while (queue.length > 0 && !closed) {
        const wait = nextAt - now();
        if (wait > 0) await pause(wait, closing.signal);
        const job = queue.shift();
        if (!job || closed) break;
        const started = now();
        try {
          await job();
        } catch (error) {
          tell(error);
        }
        nextAt = now() + (now() - started) * (1 / share - 1);
      }
    } finally {
      // In the same turn as the last look at the queue: a job submitted after it starts a new drain.
      running = undefined;
    }
  }

  function tell(error: unknown): void {
    try {
      onError(error);
    } catch {
      // Telling failed (the log): the refiner goes on all the same.
    }
  }

  return {
    submit(job) {
      if (closed || queue.length >= maxQueued) return false;
      queue.push(job);
      running ??= drain();
      return true;
    },
    async close() {
      closed = true;
      queue.length = 0;
      closing.abort();
      await running;
    },
  };
}
