import { describe, it } from 'node:test';
import { allCaches, allDialects, type CacheKind, type Dialect, skipOn } from './environment.js';

/** A database dialect and a cache to run the service on. */
export interface Backend {
  readonly dialect: Dialect;
  readonly cache: CacheKind;
  readonly name: string;
}

const eachDialect: readonly Backend[] = allDialects.map((dialect) => ({
  dialect,
  cache: 'memory',
  name: dialect,
}));
const eachDialectAndCache: readonly Backend[] = allDialects.flatMap((dialect) =>
  allCaches.map((cache) => ({ dialect, cache, name: `${dialect} with the ${cache} cache` })),
);

/**
 * `describe`, or, when `options.skip` gives a reason, one skipped test in the suite's place. node:test
 * counts a skipped suite as no test at all (`# skipped 0`), so a run without PostgreSQL or Redis would
 * look complete; this way `# skipped` counts each suite left out, once, with the reason beside it.
 */
export function describeOrSkip(
  title: string,
  options: { skip: string | false; concurrency?: boolean | number },
  body: () => void,
): void {
  const { skip, ...rest } = options;
  if (skip) it(title, { skip }, () => undefined);
  else describe(title, rest, body);
}

/**
 * Declares the suite once per backend: on every dialect (SQLite, and PostgreSQL when configured), and with
 * `{ caches: true }` on every dialect x cache (memory, and Redis when configured); a backend without its
 * server is reported as skipped (see describeOrSkip). The backends' suites run side by side (each test has
 * its own database and key space); the tests within one run in order.
 */
export function describeEachBackend(
  title: string,
  body: (backend: Backend) => void,
  options: { caches?: boolean } = {},
): void {
  describe(title, { concurrency: true }, () => {
    for (const backend of options.caches ? eachDialectAndCache : eachDialect) {
      describeOrSkip(
        `on ${backend.name}`,
        { skip: skipOn(backend.dialect, backend.cache), concurrency: 1 },
        () => body(backend),
      );
    }
  });
}
