import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, type LogCapture, suiteScope } from '../helpers/build-test-app.js';

/** A raw client connection: everything the server wrote, and whether it has closed the connection. */
interface RawClient {
  readonly socket: Socket;
  received(): string;
  /** Resolves when the server has closed the connection, with what it wrote; rejects after `withinMs`. */
  closed(withinMs: number): Promise<string>;
}

async function openRaw(port: number): Promise<RawClient> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let data = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => {
    data += chunk;
  });
  socket.on('error', () => undefined);
  const ended = once(socket, 'close');
  return {
    socket,
    received: () => data,
    closed: (withinMs) => {
      // The deadline is cancelled once the connection closes: no timer is left to hold the process.
      const deadline = new AbortController();
      return Promise.race([
        ended.then(() => {
          deadline.abort();
          return data;
        }),
        sleep(withinMs, undefined, { signal: deadline.signal }).then(() => {
          throw new Error(`the server kept the connection open for ${withinMs} ms; it wrote: ${data}`);
        }),
      ]);
    },
  };
}

const REFRESH_HEAD =
  'POST /auth/refresh HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n';

/** A 408 ErrorResponse, written raw, and nothing after it. */
function assertTimedOut(answer: string) {
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  assert.match(head, /^HTTP\/1\.1 408 /);
  assert.match(head, /\r\nconnection: close/i);
  assert.match(head, /\r\ncache-control: no-store/i);
  assert.match(head, /\r\napi-version: 4\.0/i);
  const error = JSON.parse(body);
  assert.equal(error.code, 408);
  assert.equal(error.extra[0].name, 'REQUEST_TIMEOUT');
}

// The limits are short here so that the tests are; what is asserted is that the connection is closed, with
// a wide margin on how soon (several times the limit), never a precise time.
const REQUEST_TIMEOUT_MS = 1000;
const HEADERS_TIMEOUT_MS = 500;
const CLOSED_WITHIN_MS = 15_000;

describe('stalled clients', () => {
  let app: FastifyInstance;
  let logs: LogCapture;
  let port: number;
  const scope = suiteScope();
  before(async () => {
    ({ app, logs } = await buildTestApp(scope, {
      env: {
        REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
        HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
        KEEP_ALIVE_TIMEOUT_MS: '300',
      },
    }));
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as { port: number }).port;
  });

  it('closes a connection whose body stops halfway, with a 408 ErrorResponse', async () => {
    const client = await openRaw(port);
    client.socket.write(`${REFRESH_HEAD}{"token":"abc`);
    assertTimedOut(await client.closed(CLOSED_WITHIN_MS));
  });

  it('closes a connection that trickles its body a byte at a time, before the body is complete', async () => {
    const client = await openRaw(port);
    client.socket.write(REFRESH_HEAD);
    let sent = 0;
    const trickle = setInterval(() => {
      if (!client.socket.writable || sent >= 99) return;
      client.socket.write(' ');
      sent++;
    }, 100);
    try {
      assertTimedOut(await client.closed(CLOSED_WITHIN_MS));
    } finally {
      clearInterval(trickle);
    }
    assert.ok(sent < 99, 'closed before the body was complete');
  });

  it('closes a connection whose headers stop halfway, with a 408 ErrorResponse', async () => {
    const client = await openRaw(port);
    client.socket.write('GET /health HTTP/1.1\r\nHost: local');
    assertTimedOut(await client.closed(CLOSED_WITHIN_MS));
  });

  it('closes 200 stalled connections at once, and still serves', async () => {
    const clients = await Promise.all(Array.from({ length: 200 }, () => openRaw(port)));
    for (const [index, client] of clients.entries()) {
      client.socket.write(index % 2 ? `${REFRESH_HEAD}{"tok` : 'POST /auth/refresh HTTP/1.1\r\nHo');
    }
    const answers = await Promise.all(clients.map((client) => client.closed(CLOSED_WITHIN_MS)));
    for (const answer of answers) assertTimedOut(answer);
    const health = await fetch(`http://127.0.0.1:${port}/health`);
    assert.equal(health.status, 200);
    const failures = logs.lines.filter((line) => line.level === 'error' || line.level === 'fatal');
    assert.deepEqual(failures, [], 'a client that stalls is not an error of the service');
    const answered = logs.lines.filter((line) => line.msg === 'client error answered');
    assert.ok(answered.length >= 200 && answered.every((line) => line.status === 408), 'each is logged');
  });

  it('closes an idle kept-alive connection after KEEP_ALIVE_TIMEOUT_MS', async () => {
    const client = await openRaw(port);
    client.socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n');
    const answer = await client.closed(CLOSED_WITHIN_MS);
    assert.match(answer, /^HTTP\/1\.1 200 /);
  });

  it('answers a request that arrives whole as usual', async () => {
    const client = await openRaw(port);
    const body = JSON.stringify({ token: 'x'.repeat(88) });
    assert.equal(body.length, 100);
    client.socket.write(`${REFRESH_HEAD}${body}`);
    const answer = await client.closed(CLOSED_WITHIN_MS);
    assert.match(answer, /^HTTP\/1\.1 401 /, 'answered as usual');
  });
});
