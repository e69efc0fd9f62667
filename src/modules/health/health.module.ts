import type { Registry } from 'prom-client';
import type { AppModule } from '../../platform/app-module.js';
import type { Logger } from '../../platform/logger.js';
import { healthRoutes } from './health.routes.js';
import { createHealthService, type HealthService, type Probe } from './health.service.js';

export interface HealthModuleDeps {
  /** One readiness check per dependency, by name. */
  readonly probes: Readonly<Record<string, Probe>>;
  readonly metrics: Registry;
  readonly settings: {
    /** When set, `/metrics` answers only `Authorization: Bearer <metricsToken>`; public otherwise. */
    readonly metricsToken: string | undefined;
  };
  readonly log: Logger;
}

/** Operations: `/health` (liveness), `/ready` (readiness) and `/metrics`. */
export function createHealthModule({
  probes,
  metrics,
  settings,
  log,
}: HealthModuleDeps): AppModule<HealthService> {
  const service = createHealthService(probes, log);
  return { name: 'health', service, routes: healthRoutes(service, metrics, settings.metricsToken) };
}
