import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { after } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { type Config, loadConfig } from '../../src/config.js';
import { migrations } from '../../src/migrations.js';
import { migrateToLatest } from '../../src/platform/db/migrator.js';
import type { Backend } from './backends.js';
import { type Dialect, testRedisUrl } from './environment.js';
import { FAKE_API_KEY, type FakeUpstream } from './fake-upstream.js';
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
 * database) closes before what it stands on (that database).
 */
export function deferClose(t: Closer, close: () => unknown): void {
  let closers = deferred.get(t);
  if (!closers) {
    const stack: (() => unknown)[] = [];
    closers = stack;
    deferred.set(t, stack);
    t.after(async () => {
      for (const next of stack.reverse()) await next();
    });
  }
  closers.push(close);
}

/**
 * For apps a whole suite shares: call in the `describe` body (not in a hook); what is deferred on it
 * closes after the suite's tests.
 */
export function suiteScope(): Closer {
  const closers: (() => unknown)[] = [];
  after(async () => {
    for (const close of closers) await close();
  });
  return { after: (close) => closers.push(close) };
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
    const database = await createTestDatabase(dialect);
    deferClose(t, () => database.drop());
    databaseUrl = database.url;
  }
  return loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    DATABASE_URL: databaseUrl,
    JWT_SECRET: TEST_JWT_SECRET,
    RATE_LIMIT_AUTH_PER_MINUTE: '100000',
    REDIS_KEY_PREFIX: options.redisKeyPrefix ?? `test:${randomBytes(6).toString('hex')}:`,
    UPSTREAM_RETRY_BASE_MS: '5',
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
 * `logs`. When `t` ends it closes itself, then drops its database.
 */
export async function buildTestApp(t: Closer, options: TestAppOptions = {}): Promise<TestApp> {
  const config = await testConfig(t, options);
  const logs = new LogCapture();
  const app = await buildApp({ config, logStream: logs });
  deferClose(t, () => app.close());
  if (options.migrate !== false) await migrateToLatest(app.db, migrations);
  return { app, config, logs, databaseUrl: databaseUrlOf(config) };
}
