import type { Registry } from 'prom-client';
import type { AppModule } from '../../platform/app-module.js';
import { healthRoutes } from './health.routes.js';
import { createHealthService, type HealthService, type Probe } from './health.service.js';

export interface HealthModuleDeps {
  /** One readiness check per dependency, by name. */
  readonly probes: Readonly<Record<string, Probe>>;
  readonly metrics: Registry;
}

/** Operations: `/health` (liveness), `/ready` (readiness) and `/metrics`. */
export function createHealthModule({ probes, metrics }: HealthModuleDeps): AppModule<HealthService> {
  const service = createHealthService(probes);
  return { name: 'health', service, routes: healthRoutes(service, metrics) };
}
