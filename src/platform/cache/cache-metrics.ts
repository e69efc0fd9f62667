import { Counter, type Registry } from 'prom-client';

export interface CacheMetrics {
  looked(resource: string, result: 'hit' | 'miss' | 'stale'): void;
  joined(resource: string): void;
  /**
   * A compressed copy made again in the background: smaller (replaced), kept (it was no smaller), dropped
   * (too many waiting), gone (the entry changed or left the cache first).
   */
  refined(resource: string, outcome: RefineOutcome): void;
}

export type RefineOutcome = 'smaller' | 'kept' | 'dropped' | 'gone';

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
  const refinements = new Counter({
    name: 'cache_variant_refinements_total',
    help:
      "Compressed copies made again at the coding's smallest in the background: smaller (replaced), kept " +
      '(no smaller), dropped (too many waiting), gone (the entry changed or left the cache first).',
    labelNames: ['resource', 'outcome'],
    registers: [registry],
  });
  return {
    looked: (resource, result) => lookups.inc({ resource, result }),
    joined: (resource) => joins.inc({ resource }),
    refined: (resource, outcome) => refinements.inc({ resource, outcome }),
  };
}
