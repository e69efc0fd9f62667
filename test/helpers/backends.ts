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
/** Every dialect with every cache. */
const everyDialectAndCache: readonly Backend[] = allDialects.flatMap((dialect) =>
  allCaches.map((cache) => ({ dialect, cache, name: `${dialect} with the ${cache} cache` })),
);
/**
 * Each dialect with the in-process cache, and the Redis cache on PostgreSQL (the deployment of several
 * instances): every dialect and every cache, without crossing them all, for suites where the cache does
 * not depend on the database.
 */
const eachDialectAndCache: readonly Backend[] = everyDialectAndCache.filter(
  (backend) => backend.cache === 'memory' || backend.dialect === 'postgres',
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
 * Declares the suite once per backend: on every dialect (SQLite, and PostgreSQL when configured); with
 * `{ caches: true }` also with the Redis cache (when configured) on PostgreSQL; with `{ caches: 'crossed' }`
 * on every dialect x cache, for a suite where the two meet (SQLite's revocation feed through Redis). A
 * backend without its server is reported as skipped (see describeOrSkip). The backends' suites run side by
 * side (each test has its own database and key space); the tests within one run in order.
 */
export function describeEachBackend(
  title: string,
  body: (backend: Backend) => void,
  options: { caches?: boolean | 'crossed' } = {},
): void {
  const backends =
    options.caches === 'crossed' ? everyDialectAndCache : options.caches ? eachDialectAndCache : eachDialect;
  describe(title, { concurrency: true }, () => {
    for (const backend of backends) {
      describeOrSkip(
        `on ${backend.name}`,
        { skip: skipOn(backend.dialect, backend.cache), concurrency: 1 },
        () => body(backend),
      );
    }
  });
}
