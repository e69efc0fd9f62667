import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { deferClose, TEST_JWT_SECRET } from '../helpers/build-test-app.js';
import { skipWithoutPostgres, testDatabaseUrl } from '../helpers/environment.js';
import { nodeArgs } from '../helpers/node-process.js';
import { startTcpProxy, throughProxy } from '../helpers/tcp-proxy.js';
import { createTestDatabase } from '../helpers/test-database.js';

interface Outcome {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** When the process was started and when it ended (Date.now()). */
  readonly spawnedAt: number;
  readonly exitedAt: number;
}

/** When the service wrote its log line `message` (the line's own time), or fails naming what it wrote. */
function loggedAt(stdout: string, message: string): number {
  const line = stdout
    .split('\n')
    .filter(Boolean)
    .map((text) => JSON.parse(text))
    .find((entry) => entry.msg === message);
  assert.ok(line, `a log line "${message}" in:\n${stdout}`);
  return Date.parse(line.time);
}

/**
 * How long past DATABASE_CONNECT_TIMEOUT_SECONDS a start may take to give up: the last try, up to a second,
 * and a second for a loaded machine's timers. Measured on the service's own clock, from its "connecting"
 * line to its "giving up" line; without the bound the silent database took 5 s more (the pool's own
 * connect timeout).
 */
const GIVE_UP_SLACK_MS = 2000;
/**
 * How long after giving up the process may take to be seen gone: its close is bounded at a second, the rest
 * is the exit and this test process noticing it, which a machine running many suites delays (a CI run at
 * load 10 saw 4.4 s from "connecting" to the exit event for a 2 s timeout).
 */
const EXIT_AFTER_GIVING_UP_MS = 5000;

/** When the service began trying the database and when it gave up, on its own clock, and when it was seen to exit. */
function giveUpTimes(outcome: Outcome) {
  const began = loggedAt(outcome.stdout, 'connecting to the database');
  const gaveUp = loggedAt(outcome.stdout, 'database not reachable; giving up');
  assert.ok(
    outcome.exitedAt - gaveUp <= EXIT_AFTER_GIVING_UP_MS,
    `exited ${outcome.exitedAt - gaveUp} ms after giving up`,
  );
  return { waited: gaveUp - began };
}

/** The service (src/main.ts) as a process: what it says, and how it ends. */
function startService(env: Record<string, string>) {
  const spawnedAt = Date.now();
  const child = spawn(process.execPath, nodeArgs('src/main.ts'), {
    // A secret of its own, so that the service writes no secret file into the working directory.
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'info',
      JWT_SECRET: TEST_JWT_SECRET,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    stdout += text;
  });
  child.stderr.setEncoding('utf8').on('data', (text: string) => {
    stderr += text;
  });
  const exited: Promise<Outcome> = once(child, 'exit').then(([code]) => ({
    code,
    stdout,
    stderr,
    spawnedAt,
    exitedAt: Date.now(),
  }));
  return {
    exited,
    /** Resolves once standard output matches; rejects if the process ends first. */
    said: (pattern: RegExp) =>
      new Promise<void>((resolve, reject) => {
        const look = () => {
          if (!pattern.test(stdout)) return;
          child.stdout.off('data', look);
          resolve();
        };
        child.stdout.on('data', look);
        exited.then((outcome) => reject(new Error(`exited ${outcome.code} first: ${outcome.stderr}`)));
        look();
      }),
    stop: () => child.kill('SIGTERM'),
  };
}

/** A port nothing listens on: taken from the system, then given back. */
async function closedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Exit 1 with exactly one line on stderr, and no stack trace anywhere. */
function assertOneLineFailure(outcome: Outcome): string {
  assert.equal(outcome.code, 1, outcome.stderr);
  const lines = outcome.stderr.split('\n').filter(Boolean);
  assert.equal(lines.length, 1, `one line on stderr, got:\n${outcome.stderr}`);
  assert.doesNotMatch(`${outcome.stderr}${outcome.stdout}`, /\n\s+at |\\n\s+at /, 'no stack trace');
  return lines[0] ?? '';
}

describe('start-up failures', { concurrency: true }, () => {
  it('an unreachable database: retries with a log line per attempt, then one clear line and exit 1', async () => {
    const port = await closedPort();
    const outcome = await startService({
      DATABASE_URL: `postgres://service:hunter2-secret@127.0.0.1:${port}/players`,
      DATABASE_CONNECT_TIMEOUT_SECONDS: '2',
    }).exited;
    const line = assertOneLineFailure(outcome);
    assert.match(
      line,
      new RegExp(`cannot reach the database postgres://service@127\\.0\\.0\\.1:${port}/players`),
    );
    assert.match(line, /ECONNREFUSED/);
    assert.doesNotMatch(`${outcome.stderr}${outcome.stdout}`, /hunter2/, 'the password is never written');
    const attempts = outcome.stdout
      .split('\n')
      .filter(Boolean)
      .map((text) => JSON.parse(text))
      .filter((entry) => entry.msg === 'database not reachable yet; trying again');
    assert.ok(attempts.length >= 1, outcome.stdout);
    assert.deepEqual(
      attempts.map((entry) => entry.attempt),
      attempts.map((_, index) => index + 1),
    );
    const { waited } = giveUpTimes(outcome);
    assert.ok(waited <= 2000 + GIVE_UP_SLACK_MS, `gave up ${waited} ms after it began trying`);
    // "tried for 2 s" is true: it tries until the deadline, never gives up a try early.
    assert.ok(waited >= 2000 - 100, `gave up after ${waited} ms, before the timeout`);
  });

  it('a port in use: one clear line naming the address, and exit 1', async (t) => {
    const holder = createServer().listen(0, '127.0.0.1');
    await once(holder, 'listening');
    t.after(() => new Promise((resolve) => holder.close(resolve)));
    const { port } = holder.address() as { port: number };
    const database = await createTestDatabase('sqlite');
    t.after(() => database.drop());
    const outcome = await startService({ DATABASE_URL: database.url, PORT: String(port) }).exited;
    const line = assertOneLineFailure(outcome);
    assert.match(line, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: the address is already in use`));
  });

  it('a host name that does not resolve: one clear line naming it, and exit 1', async (t) => {
    const database = await createTestDatabase('sqlite');
    t.after(() => database.drop());
    const outcome = await startService({ DATABASE_URL: database.url, HOST: 'nonexistent.invalid' }).exited;
    const line = assertOneLineFailure(outcome);
    assert.match(line, /cannot listen on nonexistent\.invalid:0: no such host name/);
  });

  it('a database that accepts connections but never answers: bounded by the timeout, one line, exit 1', async (t) => {
    // Takes connections and says nothing; closing it ends them too (an idle accepted socket would not end).
    const accepted = new Set<Socket>();
    const silentServer = createServer((socket) => accepted.add(socket)).listen(0, '127.0.0.1');
    await once(silentServer, 'listening');
    t.after(() => {
      for (const socket of accepted) socket.destroy();
      return new Promise((resolve) => silentServer.close(resolve));
    });
    const { port } = silentServer.address() as { port: number };
    for (const seconds of [2, 4]) {
      const outcome = await startService({
        DATABASE_URL: `postgres://service@127.0.0.1:${port}/players`,
        DATABASE_CONNECT_TIMEOUT_SECONDS: String(seconds),
      }).exited;
      const line = assertOneLineFailure(outcome);
      assert.match(
        line,
        new RegExp(
          `cannot reach the database .* \\(tried for ${seconds} s\\): no answer within ${seconds} s$`,
        ),
      );
      // Measured from the moment it began trying (its log line's own time) to the moment it gave up: the
      // time it takes to load its code before that (about a second, more on a loaded machine) is no part of
      // the timeout; the exit after is bounded apart.
      const { waited } = giveUpTimes(outcome);
      assert.ok(
        waited <= seconds * 1000 + GIVE_UP_SLACK_MS,
        `DATABASE_CONNECT_TIMEOUT_SECONDS=${seconds}: gave up ${waited} ms after it began trying ` +
          `(${outcome.exitedAt - outcome.spawnedAt} ms from start to exit)`,
      );
      // It did try for the whole time: no lower bound beyond the timeout itself, which it must not cut short.
      assert.ok(waited >= seconds * 1000 - 100, `gave up after ${waited} ms, before the timeout`);
      assert.equal(accepted.size > 0, true, 'the service did connect to the silent server');
    }
  });

  it('a Redis that accepts connections but never answers: the start waits a second for it, then goes on', async (t) => {
    const accepted = new Set<Socket>();
    const silentRedis = createServer((socket) => accepted.add(socket)).listen(0, '127.0.0.1');
    await once(silentRedis, 'listening');
    t.after(() => {
      for (const socket of accepted) socket.destroy();
      return new Promise((resolve) => silentRedis.close(resolve));
    });
    const { port } = silentRedis.address() as { port: number };
    const database = await createTestDatabase('sqlite');
    t.after(() => database.drop());
    const service = startService({ DATABASE_URL: database.url, REDIS_URL: `redis://127.0.0.1:${port}` });
    await service.said(/Server listening at/);
    service.stop();
    const outcome = await service.exited;
    assert.equal(outcome.code, 0, outcome.stderr);
    // Redis trouble never fails the start (it shows in /ready): it is waited for as long as a Redis command.
    const waited =
      loggedAt(outcome.stdout, 'redis did not answer in time; starting without it for now') -
      loggedAt(outcome.stdout, 'connecting to redis');
    assert.ok(waited <= 1000 + GIVE_UP_SLACK_MS, `waited ${waited} ms for a silent Redis`);
    assert.ok(accepted.size > 0, 'the service did connect to the silent server');
  });

  it('a database file that cannot be created: one clear line naming it, and exit 1', async (t) => {
    // Its "directory" is a file: no user, root included, can create it.
    const scratch = mkdtempSync(join(tmpdir(), 'startup-'));
    t.after(() => rmSync(scratch, { recursive: true, force: true }));
    const notADirectory = join(scratch, 'a-file');
    writeFileSync(notADirectory, '');
    const path = join(notADirectory, 'service.sqlite');
    const outcome = await startService({ DATABASE_URL: `sqlite:${path}` }).exited;
    const line = assertOneLineFailure(outcome);
    assert.ok(line.includes(`cannot open the SQLite database ${path}`), line);
  });

  it('a database under a directory that refuses new entries (/proc): the same line, at once', {
    skip: process.platform !== 'linux' && 'needs /proc',
  }, async () => {
    // Node's recursive mkdir never returns here (it spins at full CPU); creating one level at a time fails.
    const path = '/proc/no-such-directory/service.sqlite';
    const outcome = await startService({ DATABASE_URL: `sqlite:${path}` }).exited;
    const line = assertOneLineFailure(outcome);
    assert.ok(line.includes(`cannot open the SQLite database ${path}`), line);
    assert.match(line, /ENOENT/);
  });

  it('a DATA_DIR that cannot be made, with no JWT_SECRET: one line naming the secret file and the way out', async (t) => {
    const scratch = mkdtempSync(join(tmpdir(), 'startup-'));
    t.after(() => rmSync(scratch, { recursive: true, force: true }));
    const notADirectory = join(scratch, 'a-file');
    writeFileSync(notADirectory, '');
    for (const dataDir of [join(notADirectory, 'data'), '/proc/no-such-directory']) {
      if (dataDir.startsWith('/proc') && process.platform !== 'linux') continue;
      const outcome = await startService({
        DATABASE_URL: `sqlite:${join(scratch, 'service.sqlite')}`,
        DATA_DIR: dataDir,
        JWT_SECRET: '',
      }).exited;
      const line = assertOneLineFailure(outcome);
      assert.ok(line.includes(`cannot keep the JWT secret in ${join(dataDir, 'jwt-secret')}`), line);
      assert.match(line, /make DATA_DIR a directory the service may write, or set JWT_SECRET/);
    }
  });

  it('a database that comes up within DATABASE_CONNECT_TIMEOUT_SECONDS: the service waits and starts', {
    skip: skipWithoutPostgres,
  }, async (t) => {
    const target = new URL(String(testDatabaseUrl));
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    deferClose(t, () => proxy.close());
    const database = await createTestDatabase('postgres');
    deferClose(t, () => database.drop());
    proxy.cut();
    const service = startService({
      DATABASE_URL: throughProxy(database.url, proxy),
      DATABASE_CONNECT_TIMEOUT_SECONDS: '60',
    });
    await service.said(/database not reachable yet; trying again/);
    proxy.restore();
    await service.said(/Server listening at/);
    service.stop();
    const outcome = await service.exited;
    assert.equal(outcome.code, 0, outcome.stderr);
    assert.equal(outcome.stderr, '');
  });
});
