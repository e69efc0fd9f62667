import { AppError, ErrorKinds, type Problem } from '../../platform/errors.js';

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

/** Runs every probe at once; any failure makes the instance not ready, naming each failing dependency. */
export function createHealthService(probes: Readonly<Record<string, Probe>>): HealthService {
  return {
    async readiness() {
      const names = Object.keys(probes);
      const outcomes = await Promise.allSettled(names.map((name) => probes[name]?.()));
      const problems: Problem[] = [];
      outcomes.forEach((outcome, index) => {
        if (outcome.status === 'rejected') {
          problems.push({
            kind: ErrorKinds.DEPENDENCY_UNAVAILABLE,
            reason: `${names[index]} is unavailable`,
            developerReason: `${names[index]} check failed: ${(outcome.reason as Error)?.message ?? outcome.reason}`,
          });
        }
      });
      if (problems.length > 0) throw new AppError(problems, { cause: 'Not ready' });
      return { status: 'ready', checks: Object.fromEntries(names.map((name) => [name, 'ok' as const])) };
    },
  };
}
