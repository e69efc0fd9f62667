import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { loadConfig } from '../../src/config.js';
import type { TokensService } from '../../src/modules/tokens/tokens.service.js';
import { createDatabase, type Database } from '../../src/platform/db/database.js';
import { type Closer, TEST_JWT_SECRET } from './build-test-app.js';
import type { Dialect } from './environment.js';
import { nodeArgs } from './node-process.js';
import { createTestDatabase } from './test-database.js';
import { processTokens } from './tokens.js';

export interface ServiceProcess {
  readonly child: ChildProcess;
  readonly url: string;
  readonly port: number;
  readonly output: string[];
  /**
   * Resolves when the process has written a line matching `pattern`; rejects, with what it wrote, when it
   * exits first or has not said it within `withinMs` (a test then fails instead of waiting for ever).
   */
  said(pattern: RegExp, withinMs?: number): Promise<void>;
}

/** How long a process may take to say what a test waits for, unless the test says. */
const SAID_WITHIN_MS = 60_000;

/**
 * Starts a module of the project that runs the service (`src/main.ts`, or a test server built on
 * `startServer`) as a child process on a free port; resolves once it listens. It has a JWT secret of its
 * own, so that it writes no secret file into the working directory.
 */
export async function startServiceProcess(
  modulePath: string,
  env: Record<string, string>,
): Promise<ServiceProcess> {
  const child = spawn(process.execPath, nodeArgs(modulePath), {
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      JWT_SECRET: TEST_JWT_SECRET,
      // As buildTestApp: a budget of work no test under load reaches unless it sets its own.
      WORK_BUDGET_UNITS: '1000000000',
      WORK_BUDGET_MAX_IN_FLIGHT: '100000',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const said = (pattern: RegExp, withinMs = SAID_WITHIN_MS) =>
    new Promise<void>((resolve, reject) => {
      const stop = () => {
        child.stdout?.off('data', look);
        child.off('exit', exited);
        clearTimeout(late);
      };
      const look = () => {
        if (!pattern.test(output.join(''))) return;
        stop();
        resolve();
      };
      const exited = (code: number | null) => {
        stop();
        reject(new Error(`exited with ${code} before saying ${pattern}:\n${output.join('')}`));
      };
      const late = setTimeout(() => {
        stop();
        reject(new Error(`did not say ${pattern} within ${withinMs} ms:\n${output.join('')}`));
      }, withinMs);
      child.stdout?.on('data', look);
      child.once('exit', exited);
      look();
    });
  child.stdout?.setEncoding('utf8').on('data', (text: string) => output.push(text));
  child.stderr?.setEncoding('utf8').on('data', (text: string) => output.push(text));
  await said(/Server listening at http:\/\/127\.0\.0\.1:\d+/);
  const url = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output.join(''))?.[1] ?? '';
  return { child, url, port: Number(new URL(url).port), output, said };
}

/** A service process on a database of its own, with what a test needs around it. */
export interface ServiceOnDatabase {
  readonly service: ServiceProcess;
  /** Resolves with the process's exit. */
  readonly exited: Promise<unknown[]>;
  /** A connection of the test's own to the process's database. */
  readonly db: Database;
  /** Issues tokens the process accepts, as the command line would. */
  readonly tokens: TokensService;
  /** The process's environment (its DATABASE_URL among it), to start another on the same database. */
  readonly env: Record<string, string>;
}

/**
 * `startServiceProcess` on a fresh database of `dialect`: when `t` ends the process is killed (SIGKILL, if
 * it still runs) and the database dropped.
 */
export async function serviceOnFreshDatabase(
  t: Closer,
  dialect: Dialect,
  modulePath: string,
  env: Record<string, string>,
): Promise<ServiceOnDatabase> {
  const database = await createTestDatabase(dialect);
  const withDatabase = { ...env, DATABASE_URL: database.url };
  const db = createDatabase(loadConfig(withDatabase).database);
  t.after(async () => {
    await db.destroy();
    await database.drop();
  });
  const service = await startServiceProcess(modulePath, withDatabase);
  const exited = once(service.child, 'exit');
  t.after(() => service.child.kill('SIGKILL'));
  return { service, exited, db, tokens: processTokens(db), env: withDatabase };
}
