import { AppError, ErrorKinds, type Problem } from '../../platform/errors.js';
import type { Logger } from '../../platform/logger.js';

/** The instance can serve: every dependency checked answered. */
export interface Readiness {
  readonly status: 'ready';
  readonly checks: Readonly<Record<string, 'ok'>>;
}

/** A readiness check: resolves when its dependency is usable, throws (with a reason) when not. */
export type Probe = () => Promise<void>;

export interface HealthService {
  readiness(): Promise<Readiness>;
}

/**
 * Runs every probe at once; any failure makes the instance not ready, naming each failing dependency. The
 * answer names the dependency only: why it failed (a driver's message, a host name) goes to the log.
 */
export function createHealthService(probes: Readonly<Record<string, Probe>>, log: Logger): HealthService {
  return {
    async readiness() {
      const names = Object.keys(probes);
      const outcomes = await Promise.allSettled(names.map((name) => probes[name]?.()));
      const problems: Problem[] = [];
      outcomes.forEach((outcome, index) => {
        if (outcome.status === 'rejected') {
          const dependency = names[index];
          log.warn({ err: outcome.reason, dependency }, 'readiness check failed');
          problems.push({
            kind: ErrorKinds.DEPENDENCY_UNAVAILABLE,
            reason: `${dependency} is unavailable`,
            developerReason: `${dependency} does not answer; the service log says why`,
          });
        }
      });
      if (problems.length > 0) throw new AppError(problems, { cause: 'Not ready' });
      return { status: 'ready', checks: Object.fromEntries(names.map((name) => [name, 'ok' as const])) };
    },
  };
}
