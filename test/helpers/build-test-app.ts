import { Writable } from 'node:stream';
import { after, afterEach } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { type Config, loadConfig } from '../../src/config.js';
import { migrations } from '../../src/migrations.js';
import { migrateWithoutBound } from '../../src/platform/db/migrator.js';
import type { Backend } from './backends.js';
import { type Dialect, testRedisUrl } from './environment.js';
import { FAKE_API_KEY, type FakeUpstream } from './fake-upstream.js';
import { type ResponseConformance, watchConformance } from './openapi-conformance.js';
import { freshKeyPrefix } from './redis-keys.js';
import { createTestDatabase } from './test-database.js';

export const TEST_JWT_SECRET = 'test-secret-of-at-least-thirty-two-bytes!';

/** The JSON log lines an app wrote, parsed. */
export class LogCapture extends Writable {
  readonly lines: Record<string, unknown>[] = [];
  readonly raw: string[] = [];

  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
      this.raw.push(line);
      this.lines.push(JSON.parse(line));
    }
    done();
  }
}

/** Whatever closes what a test opened: a test's context (`t`), or a suite's scope (`suiteScope()`). */
export interface Closer {
  after(close: () => unknown): void;
}

const deferred = new WeakMap<Closer, (() => unknown)[]>();

/**
 * Runs `close` when `t` ends, last in first out: what was opened later (a second app on a first app's
 * database) closes before what it stands on (that database). Every close runs even if one fails; then the
 * first failure fails `t`.
 */
export function deferClose(t: Closer, close: () => unknown): void {
  let closers = deferred.get(t);
  if (!closers) {
    const stack: (() => unknown)[] = [];
    closers = stack;
    deferred.set(t, stack);
    t.after(async () => {
      const failures: unknown[] = [];
      for (const next of stack.reverse()) {
        try {
          await next();
        } catch (error) {
          failures.push(error);
        }
      }
      if (failures.length > 0) throw failures[0];
    });
  }
  closers.push(close);
}

/** The checks to run after each test of a suite scope (suiteScope), so that a failure names its test. */
const suiteChecks = new WeakMap<Closer, (() => void)[]>();

/**
 * For apps a whole suite shares: call in the `describe` body (not in a hook); what is deferred on it
 * closes after the suite's tests. After each test, the answers its apps sent are checked against the
 * OpenAPI document (openapi-conformance.ts).
 */
export function suiteScope(): Closer {
  const closers: (() => unknown)[] = [];
  const checks: (() => void)[] = [];
  afterEach(() => {
    for (const check of checks) check();
  });
  after(async () => {
    for (const close of closers) await close();
  });
  const scope: Closer = { after: (close) => closers.push(close) };
  suiteChecks.set(scope, checks);
  return scope;
}

export interface TestAppOptions {
  /** The database dialect and cache to run on (SQLite and the memory cache by default). */
  readonly backend?: Backend;
  readonly dialect?: Dialect;
  /** Connect to the test Redis (TEST_REDIS_URL). */
  readonly redis?: boolean;
  /** More environment variables, as the service would read them. */
  readonly env?: Readonly<Record<string, string>>;
  /** Skip migrations, to see the service on an empty database. */
  readonly migrate?: boolean;
  /** Point the upstream clients (Hypixel and Mojang) at this fake, with its API key. */
  readonly upstream?: FakeUpstream;
  /** Reuse a database (another app's), instead of a fresh one. */
  readonly databaseUrl?: string;
  /** Redis key prefix; a fresh one per app unless given (two apps sharing one act as one deployment). */
  readonly redisKeyPrefix?: string;
}

export interface TestApp {
  readonly app: FastifyInstance;
  readonly config: Config;
  readonly logs: LogCapture;
  /** The app's DATABASE_URL, for a second instance on the same database. */
  readonly databaseUrl: string;
  /** Its answers as checked against its OpenAPI document; any mismatch fails the test that caused it. */
  readonly conformance: ResponseConformance;
}

/**
 * A fresh database of the given dialect (dropped when `t` ends) and the configuration of a service on it,
 * as the service would read it from the environment.
 */
export async function testConfig(t: Closer, options: TestAppOptions = {}): Promise<Config> {
  const dialect = options.backend?.dialect ?? options.dialect ?? 'sqlite';
  const redis = options.backend ? options.backend.cache === 'redis' : options.redis === true;
  if (redis && !testRedisUrl) throw new Error('TEST_REDIS_URL is not set');
  let databaseUrl = options.databaseUrl;
  if (!databaseUrl) {
    const database = await createTestDatabase(dialect, { migrated: options.migrate !== false });
    deferClose(t, () => database.drop());
    databaseUrl = database.url;
  }
  return loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    DATABASE_URL: databaseUrl,
    JWT_SECRET: TEST_JWT_SECRET,
    RATE_LIMIT_AUTH_PER_MINUTE: '100000',
    // A budget no suite reaches unless it sets its own (the owners' budgets have suites of their own).
    WORK_BUDGET_UNITS: '1000000000',
    WORK_BUDGET_MAX_IN_FLIGHT: '100000',
    REDIS_KEY_PREFIX: options.redisKeyPrefix ?? freshKeyPrefix(t),
    UPSTREAM_RETRY_BASE_MS: '5',
    // Tests keep a few tokens: a small cache is made in no time (its arrays are allocated up front).
    TOKEN_CACHE_MAX_ENTRIES: '1000',
    ...(redis && testRedisUrl ? { REDIS_URL: testRedisUrl } : {}),
    ...(options.upstream
      ? {
          HYPIXEL_API_URL: options.upstream.url,
          MOJANG_API_URL: options.upstream.url,
          HYPIXEL_API_KEY: FAKE_API_KEY,
        }
      : {}),
    ...options.env,
  });
}

/** A configuration's DATABASE_URL again, for a second instance on the same database. */
const databaseUrlOf = (config: Config): string =>
  config.database.dialect === 'sqlite' ? `sqlite:${config.database.path}` : config.database.url;

/**
 * The whole service on a fresh database of the given dialect (migrated), logging at info level into
 * `logs`. When `t` ends it closes itself, then drops its database. Every answer it sends is checked against
 * its OpenAPI document: a mismatch fails the test (`t`'s, or with a suite scope the test that caused it).
 */
export async function buildTestApp(t: Closer, options: TestAppOptions = {}): Promise<TestApp> {
  const config = await testConfig(t, options);
  const logs = new LogCapture();
  const { built, conformance } = watchConformance(() => buildApp({ config, logStream: logs }));
  // Deferred before the app's close, so run after it: answers still in flight are checked too.
  deferClose(t, () => conformance.assertConforms());
  suiteChecks.get(t)?.push(() => conformance.assertConforms());
  const app = await built;
  deferClose(t, () => app.close());
  // A fresh database comes migrated (test-database.ts); one given is brought up to date, as the service
  // does it (without the statements' bound a test may set low).
  if (options.migrate !== false && options.databaseUrl)
    await migrateWithoutBound(app.db, config.database, migrations);
  return { app, config, logs, databaseUrl: databaseUrlOf(config), conformance };
}
