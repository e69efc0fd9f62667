import { once } from 'node:events';
import { type Closer, deferClose } from './build-test-app.js';
import { testRedisUrl } from './environment.js';
import { FAKE_API_KEY, type FakeUpstream } from './fake-upstream.js';
import { freshKeyPrefix } from './redis-keys.js';
import { type ServiceProcess, startServiceProcess } from './service-process.js';
import { createTestDatabase } from './test-database.js';

/** Several instances of the service as one deployment would run them. */
export interface Deployment {
  readonly instances: readonly ServiceProcess[];
  /** The instances' DATABASE_URL: a fresh PostgreSQL schema of their own. */
  readonly databaseUrl: string;
}

export interface DeploymentOptions {
  /** How many instances (processes) to start, all at once. */
  readonly count: number;
  /** The fake that plays Hypixel and Mojang for every instance. */
  readonly upstream: FakeUpstream;
  /** More environment variables, the same for every instance. */
  readonly env?: Readonly<Record<string, string>>;
}

/** How long a stopped instance may take to shut down gracefully before it is killed. */
const STOP_TIMEOUT_MS = 10_000;

/**
 * `count` instances of the service (src/main.ts), each a process of its own, started at the same moment as
 * one deployment: one fresh PostgreSQL database, one Redis key space (a prefix of their own, so that runs
 * never meet), and the fake upstream. Resolves once every instance listens and hears token revocations (its
 * Redis subscription stands: before that it keeps no token record, and a test of revocations would prove
 * nothing). When `t` ends each instance is stopped, then the database dropped.
 */
export async function startDeployment(t: Closer, options: DeploymentOptions): Promise<Deployment> {
  if (!testRedisUrl) throw new Error('TEST_REDIS_URL is not set');
  const database = await createTestDatabase('postgres');
  deferClose(t, () => database.drop());
  const env = {
    NODE_ENV: 'test',
    DATABASE_URL: database.url,
    REDIS_URL: testRedisUrl,
    REDIS_KEY_PREFIX: freshKeyPrefix(t),
    HYPIXEL_API_URL: options.upstream.url,
    MOJANG_API_URL: options.upstream.url,
    HYPIXEL_API_KEY: FAKE_API_KEY,
    ...options.env,
  };
  const started = await Promise.allSettled(
    Array.from({ length: options.count }, () => startServiceProcess('src/main.ts', env)),
  );
  // Those that did start are stopped even when another one failed to.
  const instances: ServiceProcess[] = [];
  for (const result of started) {
    if (result.status === 'rejected') continue;
    instances.push(result.value);
    deferClose(t, () => stop(result.value));
  }
  const failed = started.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
  await Promise.all(instances.map((instance) => instance.said(/"msg":"invalidation feed subscribed"/)));
  return { instances, databaseUrl: database.url };
}

/** SIGTERM, as an orchestrator stops an instance; SIGKILL if it has not exited in time. */
async function stop(instance: ServiceProcess): Promise<void> {
  const { child } = instance;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(killer);
}
