/**
 * Load scenarios. Each is one GET answered by the service and, for comparison in the same run, by a bare
 * node:http server writing the bytes the service wrote. Later issues add scenarios here.
 */
export interface Scenario {
  readonly name: string;
  readonly path: string;
  /** Environment for the service process (for example a fake upstream's URL). */
  readonly env?: Readonly<Record<string, string>>;
}

export const scenarios: readonly Scenario[] = [{ name: 'GET /health', path: '/health' }];
