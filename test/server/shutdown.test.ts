import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTestDatabase } from '../helpers/test-database.js';

interface Running {
  readonly child: ChildProcess;
  readonly url: string;
  readonly output: string[];
}

/** Starts the service with a slow route as a child process; resolves once it listens. */
async function startSlowServer(env: Record<string, string>): Promise<Running> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/slow-server.ts'], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.setEncoding('utf8').on('data', (text: string) => {
      output.push(text);
      const listening = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(text);
      if (listening?.[1]) resolve(listening[1]);
    });
    child.stderr?.setEncoding('utf8').on('data', (text: string) => output.push(text));
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${output.join('')}`)));
  });
  return { child, url, output };
}

describe('graceful shutdown', () => {
  it('on SIGTERM stops accepting, lets the in-flight request finish, and exits 0', async (t) => {
    const database = await createTestDatabase('sqlite');
    t.after(() => database.drop());
    const { child, url, output } = await startSlowServer({ DATABASE_URL: database.url, SLOW_MS: '1500' });
    const exited = once(child, 'exit');

    const slow = fetch(`${url}/test/slow`);
    await sleep(300); // the request is in the handler now
    child.kill('SIGTERM');
    await sleep(300);
    await assert.rejects(
      fetch(`${url}/health`, { headers: { connection: 'close' } }),
      'new connections are refused',
    );

    const reply = await slow;
    assert.equal(reply.status, 200);
    assert.deepEqual(await reply.json(), { finished: true });
    const [code] = await exited;
    assert.equal(code, 0, output.join(''));
    assert.match(output.join(''), /"signal":"SIGTERM".*shutting down/);
  });

  it('gives up on a request that outlasts SHUTDOWN_TIMEOUT_MS, and exits non-zero', async (t) => {
    const database = await createTestDatabase('sqlite');
    t.after(() => database.drop());
    const { child, url } = await startSlowServer({
      DATABASE_URL: database.url,
      SLOW_MS: '30000',
      SHUTDOWN_TIMEOUT_MS: '500',
    });
    const exited = once(child, 'exit');
    const slow = fetch(`${url}/test/slow`).catch((error: Error) => error);
    await sleep(300);
    const killedAt = Date.now();
    child.kill('SIGTERM');
    const [code] = await exited;
    assert.notEqual(code, 0);
    assert.ok(Date.now() - killedAt < 10_000, 'the shutdown is bounded');
    assert.ok((await slow) instanceof Error);
  });
});
