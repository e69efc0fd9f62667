import { randomUUID } from 'node:crypto';
import type { Logger } from '../logger.js';
import { takeLease } from './leases.js';
import type { Executor } from './transactions.js';

export interface PeriodicJobOptions {
  /** The job's name: its lease's name, the same on every instance. */
  readonly name: string;
  /** How often the job runs, across all the instances sharing the database. */
  readonly everyMs: number;
  /** When the first attempt is, after the start: a minute, or the period if shorter, by default. */
  readonly firstAfterMs?: number;
  readonly db: Executor;
  readonly log: Logger;
  /** The work; what it resolves to is logged. */
  readonly run: () => Promise<Record<string, unknown>>;
  readonly now?: () => number;
}

export interface PeriodicJob {
  /** One attempt now: takes the lease and runs the work if no instance ran it this period; whether it ran. */
  runOnce(): Promise<boolean>;
  /** Stops the timer and waits for a run under way. */
  close(): Promise<void>;
}

/**
 * A job that runs once per period whatever the number of instances: every instance tries each period, and
 * only the one that takes the job's lease (held for the period) runs it. A failed run is logged and tried
 * again the next period (the lease is kept: a failing job does not hammer the database).
 */
export function startPeriodicJob({
  name,
  everyMs,
  firstAfterMs = Math.min(everyMs, 60_000),
  db,
  log,
  run,
  now = Date.now,
}: PeriodicJobOptions): PeriodicJob {
  const holder = randomUUID();
  let running: Promise<boolean> | undefined;

  async function attempt(): Promise<boolean> {
    const at = now();
    try {
      if (!(await takeLease(db, { name, holder, now: at, expiresAt: at + everyMs }))) return false;
      const outcome = await run();
      log.info({ job: name, durationMs: now() - at, ...outcome }, 'periodic job ran');
      return true;
    } catch (error) {
      log.error({ job: name, err: error }, 'periodic job failed');
      return false;
    }
  }

  const runOnce = (): Promise<boolean> => {
    running ??= attempt().finally(() => {
      running = undefined;
    });
    return running;
  };

  // Not at once: an instance starting is busy enough, and a restart loop should not run the job each time.
  const first = setTimeout(runOnce, firstAfterMs);
  const timer = setInterval(runOnce, everyMs);
  first.unref();
  timer.unref();
  return {
    runOnce,
    async close() {
      clearTimeout(first);
      clearInterval(timer);
      await running;
    },
  };
}
