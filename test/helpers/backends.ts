import { describe } from 'node:test';
import { type CacheKind, caches, type Dialect, dialects } from './environment.js';

/** A database dialect and a cache to run the service on. */
export interface Backend {
  readonly dialect: Dialect;
  readonly cache: CacheKind;
  readonly name: string;
}

const eachDialect: readonly Backend[] = dialects.map((dialect) => ({
  dialect,
  cache: 'memory',
  name: dialect,
}));
const eachDialectAndCache: readonly Backend[] = dialects.flatMap((dialect) =>
  caches.map((cache) => ({ dialect, cache, name: `${dialect} with the ${cache} cache` })),
);

/**
 * Declares the suite once per backend: on every dialect (SQLite, and PostgreSQL when configured), and with
 * `{ caches: true }` on every dialect x cache (memory, and Redis when configured). The backends' suites
 * run side by side (each test has its own database and key space); the tests within one run in order.
 */
export function describeEachBackend(
  title: string,
  body: (backend: Backend) => void,
  options: { caches?: boolean } = {},
): void {
  describe(title, { concurrency: true }, () => {
    for (const backend of options.caches ? eachDialectAndCache : eachDialect) {
      describe(`on ${backend.name}`, { concurrency: 1 }, () => body(backend));
    }
  });
}
