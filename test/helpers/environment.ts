/**
 * Which real servers the suites run against. SQLite always; PostgreSQL when TEST_DATABASE_URL is set;
 * Redis when TEST_REDIS_URL is set. Under CI=true both must be set: a suite that silently skips there
 * would pass while testing nothing.
 */
const inCi = process.env.CI === 'true';

function required(name: 'TEST_DATABASE_URL' | 'TEST_REDIS_URL'): string | undefined {
  const value = process.env[name] || undefined;
  if (!value && inCi) throw new Error(`${name} must be set when CI=true: its suite may not be skipped in CI`);
  return value;
}

export const testDatabaseUrl = required('TEST_DATABASE_URL');
export const testRedisUrl = required('TEST_REDIS_URL');

/**
 * Why the suites on PostgreSQL, or on Redis, are skipped in this run (false: they run), for node:test's
 * `skip`. Each names what to set, since the runner prints the reason beside every skipped test.
 */
export const skipWithoutPostgres: string | false = testDatabaseUrl
  ? false
  : 'TEST_DATABASE_URL is not set (e.g. TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test)';
export const skipWithoutRedis: string | false = testRedisUrl
  ? false
  : 'TEST_REDIS_URL is not set (e.g. TEST_REDIS_URL=redis://127.0.0.1:6379)';

export type Dialect = 'sqlite' | 'postgres';
export const allDialects: readonly Dialect[] = ['sqlite', 'postgres'];
/** The dialects this run has a server for. */
export const dialects: readonly Dialect[] = testDatabaseUrl ? allDialects : ['sqlite'];

export type CacheKind = 'memory' | 'redis';
export const allCaches: readonly CacheKind[] = ['memory', 'redis'];

/** Why the suites on this dialect and cache are skipped in this run, naming every variable missing. */
export function skipOn(dialect: Dialect, cache: CacheKind = 'memory'): string | false {
  const reasons = [dialect === 'postgres' && skipWithoutPostgres, cache === 'redis' && skipWithoutRedis];
  return reasons.filter(Boolean).join('; ') || false;
}
