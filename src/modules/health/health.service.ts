import type { Logger } from '../../platform/logger.js';

/**
 * Whether the instance can serve: `ready` when every dependency checked answered, `not_ready` naming those
 * that did not.
 */
export type Readiness =
  | { readonly status: 'ready'; readonly checks: Readonly<Record<string, 'ok'>> }
  | { readonly status: 'not_ready'; readonly unavailable: readonly string[] };

/** A readiness check: resolves when its dependency is usable, throws (with a reason) when not. */
export type Probe = () => Promise<void>;

export interface HealthService {
  readiness(): Promise<Readiness>;
}

/**
 * Runs every probe at once; any failure makes the instance not ready, naming each failing dependency. The
 * readiness names the dependency only: why it failed (a driver's message, a host name) goes to the log.
 */
export function createHealthService(probes: Readonly<Record<string, Probe>>, log: Logger): HealthService {
  return {
    async readiness() {
      const names = Object.keys(probes);
      const outcomes = await Promise.allSettled(names.map((name) => probes[name]?.()));
      const unavailable: string[] = [];
      outcomes.forEach((outcome, index) => {
        const dependency = names[index];
        if (outcome.status === 'rejected' && dependency !== undefined) {
          log.warn({ err: outcome.reason, dependency }, 'readiness check failed');
          unavailable.push(dependency);
        }
      });
      if (unavailable.length > 0) return { status: 'not_ready', unavailable };
      return { status: 'ready', checks: Object.fromEntries(names.map((name) => [name, 'ok' as const])) };
    },
  };
}
