import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { type Config, loadConfig } from '../../src/config.js';
import { migrateToLatest } from '../../src/platform/db/migrator.js';
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

export interface TestAppOptions {
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
}

/**
 * The whole service on a fresh database of the given dialect (migrated), logging at info level into
 * `logs`. Closing the app drops the database.
 */
export async function buildTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const database = options.databaseUrl ? undefined : await createTestDatabase(options.dialect ?? 'sqlite');
  if (options.redis && !testRedisUrl) throw new Error('TEST_REDIS_URL is not set');
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    DATABASE_URL: options.databaseUrl ?? database?.url,
    JWT_SECRET: TEST_JWT_SECRET,
    RATE_LIMIT_AUTH_PER_MINUTE: '100000',
    REDIS_KEY_PREFIX: options.redisKeyPrefix ?? `test:${randomBytes(6).toString('hex')}:`,
    UPSTREAM_RETRY_BASE_MS: '5',
    ...(options.redis && testRedisUrl ? { REDIS_URL: testRedisUrl } : {}),
    ...(options.upstream
      ? {
          HYPIXEL_API_URL: options.upstream.url,
          MOJANG_API_URL: options.upstream.url,
          HYPIXEL_API_KEY: FAKE_API_KEY,
        }
      : {}),
    ...options.env,
  });
  const logs = new LogCapture();
  const app = await buildApp({ config, logStream: logs });
  if (database) app.addHook('onClose', () => database.drop());
  if (options.migrate !== false) await migrateToLatest(app.db);
  return { app, config, logs };
}
