import { randomUUID } from 'node:crypto';
import type { Logger } from '../logger.js';
import { renewLease, takeLease } from './leases.js';
import type { Executor } from './transactions.js';

/** The lease ends this fraction of a period early (1/10): the slack for early timers and clock skew. */
const LEASE_SLACK_DIVISOR = 10;

export interface PeriodicJobOptions {
  /** The job's name: its lease's name, the same on every instance. */
  readonly name: string;
  /** How often the job runs, across all the instances sharing the database. */
  readonly everyMs: number;
  /** When the first attempt is, after the start: a minute, or the period if shorter, by default. */
  readonly firstAfterMs?: number;
  readonly db: Executor;
  readonly log: Logger;
  /**
   * The work; what it resolves to is logged. `stop` is aborted when the job closes (the instance shuts
   * down): long work stops at its next step, so that a backlog never holds up the shutdown.
   */
  readonly run: (stop: AbortSignal) => Promise<Record<string, unknown>>;
  readonly now?: () => number;
  /**
   * Calls `renew` (the lease's renewal during a long run) every `ms` until the function it returns is
   * called. Real timers by default; a test gives one on the fake clock of its `now`.
   */
  readonly renewEvery?: (ms: number, renew: () => Promise<void>) => () => void;
}

/** `renew` every `ms` on real timers, which do not hold the process open. */
function renewOnTimers(ms: number, renew: () => Promise<void>): () => void {
  const timer = setInterval(() => void renew(), ms);
  timer.unref();
  return () => clearInterval(timer);
}

export interface PeriodicJob {
  /** One attempt now: takes the lease and runs the work if no instance ran it this period; whether it ran. */
  runOnce(): Promise<boolean>;
  /** Stops the timer, tells a run under way to stop, and waits for it. */
  close(): Promise<void>;
}

/**
 * A job that runs once per period whatever the number of instances: every instance tries each period, and
 * only the one that takes the job's lease runs it. The lease ends a tenth of a period early, so that a
 * timer firing a little early (or another instance's clock running a little ahead) does not skip a
 * period: runs start at least 0.9 of a period apart, and at most a period and one attempt's delay. A run
 * that outlasts its lease extends it as it goes, so no other instance starts the job meanwhile. A failed
 * run is logged and tried again the next period (the lease is kept: a failing job does not hammer the
 * database).
 */
export function startPeriodicJob({
  name,
  everyMs,
  firstAfterMs = Math.min(everyMs, 60_000),
  db,
  log,
  run,
  now = Date.now,
  renewEvery = renewOnTimers,
}: PeriodicJobOptions): PeriodicJob {
  const holder = randomUUID();
  const closing = new AbortController();
  const leaseMs = everyMs - everyMs / LEASE_SLACK_DIVISOR;
  let running: Promise<boolean> | undefined;

  /** While a run goes on, extends the lease every half lease; stopped by the function it returns. */
  function keepLease(): () => void {
    return renewEvery(leaseMs / 2, () =>
      renewLease(db, { name, holder, expiresAt: now() + leaseMs }).then(
        () => undefined,
        (error: unknown) => log.warn({ job: name, err: error }, 'periodic job could not extend its lease'),
      ),
    );
  }

  async function attempt(): Promise<boolean> {
    const at = now();
    try {
      if (!(await takeLease(db, { name, holder, now: at, expiresAt: at + leaseMs }))) {
        log.debug({ job: name }, 'periodic job not due');
        return false;
      }
      const stopKeeping = keepLease();
      const outcome = await run(closing.signal).finally(stopKeeping);
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
      closing.abort();
      await running;
    },
  };
}

/**
 * A periodic job for a module: started by `start` (the module's, called once the app is ready, after the
 * migrations; again is no-op), closed by `close` (nothing when it never started).
 */
export function periodicJobOf(options: PeriodicJobOptions): { start(): void; close(): Promise<void> } {
  let job: PeriodicJob | undefined;
  return {
    start() {
      job ??= startPeriodicJob(options);
    },
    close: async () => job?.close(),
  };
}
