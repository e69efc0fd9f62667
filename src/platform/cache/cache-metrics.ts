import { Counter, type Registry } from 'prom-client';

export interface CacheMetrics {
  looked(resource: string, result: 'hit' | 'miss' | 'stale'): void;
  joined(resource: string): void;
}

/** The cache's counters, labelled by resource; created once per app (a second registration would throw). */
export function createCacheMetrics(registry: Registry): CacheMetrics {
  const lookups = new Counter({
    name: 'cache_lookups_total',
    help: 'Answers by where they came from: hit (fresh cache), miss (upstream), stale (old copy on upstream failure).',
    labelNames: ['resource', 'result'],
    registers: [registry],
  });
  const joins = new Counter({
    name: 'single_flight_joins_total',
    help: 'Requests that waited for an upstream call already under way instead of making their own.',
    labelNames: ['resource'],
    registers: [registry],
  });
  return {
    looked: (resource, result) => lookups.inc({ resource, result }),
    joined: (resource) => joins.inc({ resource }),
  };
}
