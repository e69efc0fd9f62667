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

export type Dialect = 'sqlite' | 'postgres';
export const dialects: readonly Dialect[] = testDatabaseUrl ? ['sqlite', 'postgres'] : ['sqlite'];

export type CacheKind = 'memory' | 'redis';
export const caches: readonly CacheKind[] = testRedisUrl ? ['memory', 'redis'] : ['memory'];
