import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startServiceProcess } from '../helpers/service-process.js';
import { createTestDatabase } from '../helpers/test-database.js';

/** Starts the service with a slow route as a child process; resolves once it listens. */
const startSlowServer = (env: Record<string, string>) =>
  startServiceProcess('test/helpers/slow-server.ts', env);

/** Whether a new TCP connection to the port is refused. */
const refuses = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });

/** Polls `check` until it holds (at most `tries` times, `everyMs` apart); whether it came to hold. */
async function eventually(check: () => Promise<boolean>, tries = 200, everyMs = 10): Promise<boolean> {
  for (let attempt = 0; attempt < tries; attempt++) {
    if (await check()) return true;
    await sleep(everyMs);
  }
  return false;
}

describe('graceful shutdown', { concurrency: true }, () => {
  it('on SIGTERM stops accepting, lets the in-flight request finish, and exits 0', async (t) => {
    const database = await createTestDatabase('sqlite');
    t.after(() => database.drop());
    const server = await startSlowServer({ DATABASE_URL: database.url, SLOW_MS: '1500' });
    const exited = once(server.child, 'exit');

    let finished = false;
    const slow = fetch(`${server.url}/test/slow`).then((reply) => {
      finished = true;
      return reply;
    });
    await server.said(/slow request started/);
    server.child.kill('SIGTERM');
    await server.said(/"signal":"SIGTERM".*shutting down/);
    assert.ok(await eventually(() => refuses(server.port)), 'new connections are refused');
    assert.equal(finished, false, 'while the in-flight request is still running');

    const reply = await slow;
    assert.equal(reply.status, 200);
    assert.deepEqual(await reply.json(), { finished: true });
    const [code] = await exited;
    assert.equal(code, 0, server.output.join(''));
  });

  it('gives up on a request that outlasts SHUTDOWN_TIMEOUT_MS, and exits non-zero', async (t) => {
    const database = await createTestDatabase('sqlite');
    t.after(() => database.drop());
    const server = await startSlowServer({
      DATABASE_URL: database.url,
      SLOW_MS: '30000',
      SHUTDOWN_TIMEOUT_MS: '500',
    });
    const exited = once(server.child, 'exit');
    const slow = fetch(`${server.url}/test/slow`).catch((error: Error) => error);
    await server.said(/slow request started/);
    const killedAt = Date.now();
    server.child.kill('SIGTERM');
    const [code] = await exited;
    assert.notEqual(code, 0);
    assert.ok(Date.now() - killedAt < 10_000, 'the shutdown is bounded');
    assert.ok((await slow) instanceof Error);
  });
});
