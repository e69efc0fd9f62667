import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, suiteScope } from '../helpers/build-test-app.js';

/** A raw connection: what the server wrote so far, when it wrote something, and when it closed. */
interface RawClient {
  readonly socket: Socket;
  received(): string;
  /** Resolves once the server has written `text` (rejects after 15 s). */
  receives(text: string): Promise<void>;
  /** Resolves with everything the server wrote once it has closed the connection (rejects after 15 s). */
  closed(): Promise<string>;
}

const WITHIN_MS = 15_000;

async function openRaw(port: number): Promise<RawClient> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let data = '';
  const waiting = new Set<() => void>();
  socket.setEncoding('utf8').on('data', (chunk: string) => {
    data += chunk;
    for (const wake of waiting) wake();
  });
  socket.on('error', () => undefined);
  const ended = once(socket, 'close');
  const deadline = <T>(promise: Promise<T>, what: string): Promise<T> => {
    const timer = new AbortController();
    return Promise.race([
      promise.finally(() => timer.abort()),
      sleep(WITHIN_MS, undefined, { signal: timer.signal }).then(() => {
        throw new Error(`${what} within ${WITHIN_MS} ms; the server wrote: ${data}`);
      }),
    ]);
  };
  return {
    socket,
    received: () => data,
    receives: (text) =>
      deadline(
        new Promise<void>((resolve) => {
          const wake = () => {
            if (!data.includes(text)) return;
            waiting.delete(wake);
            resolve();
          };
          waiting.add(wake);
          wake();
        }),
        `no "${text}"`,
      ),
    closed: () =>
      deadline(
        ended.then(() => data),
        'the connection was not closed',
      ),
  };
}

/** The raw ErrorResponse the client error handler writes, and nothing after it. */
function assertRawError(answer: string, status: number, name = 'BAD_REQUEST') {
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  assert.match(head, new RegExp(`^HTTP/1\\.1 ${status} `));
  assert.match(head, /\r\nconnection: close/i);
  assert.match(head, /\r\ncache-control: no-store/i);
  assert.match(head, /\r\napi-version: 4\.0/i);
  const error = JSON.parse(body);
  assert.equal(error.code, status);
  assert.equal(error.extra[0].name, name);
}

const GARBAGE = 'NOT HTTP AT ALL\r\n\r\n';

describe('requests Node cannot parse (the clientError handler)', () => {
  let app: FastifyInstance;
  let port: number;
  let releaseSlowAnswer: () => void = () => undefined;
  const scope = suiteScope();
  before(async () => {
    ({ app } = await buildTestApp(scope));
    // An answer whose head and first half are written at once, its second half when the test says.
    app.get('/test/slow-answer', async (_request, reply) => {
      reply.hijack();
      reply.raw.writeHead(200, { 'content-type': 'text/plain', 'content-length': '20' });
      reply.raw.write('first-half');
      await new Promise<void>((resolve) => {
        releaseSlowAnswer = resolve;
      });
      if (!reply.raw.destroyed) reply.raw.end('secondhalf');
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as { port: number }).port;
  });

  it('answers a request line that is not HTTP with a raw 400 ErrorResponse, and closes', async () => {
    const client = await openRaw(port);
    client.socket.write(GARBAGE);
    assertRawError(await client.closed(), 400);
  });

  it('answers headers over the size limit with a raw 431', async () => {
    const client = await openRaw(port);
    client.socket.write(`GET /health HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    assertRawError(await client.closed(), 431);
  });

  it('answers an Expect it does not take with a 417 ErrorResponse and closes: the body after it is no request', async () => {
    const smuggled = 'GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n';
    const client = await openRaw(port);
    client.socket.write(
      `POST /health HTTP/1.1\r\nHost: localhost\r\nExpect: bogus\r\nContent-Length: ${smuggled.length}\r\n\r\n${smuggled}`,
    );
    const written = await client.closed();
    assertRawError(written, 417, 'EXPECTATION_FAILED');
    assert.equal(written.match(/HTTP\/1\.1 /g)?.length, 1, written);
  });

  it('answers an HTTP/1.1 request without Host with a 400 ErrorResponse; HTTP/1.0 needs none', async () => {
    const client = await openRaw(port);
    client.socket.write('GET /health HTTP/1.1\r\n\r\n');
    await client.receives('}');
    const [head = '', body = ''] = client.received().split('\r\n\r\n');
    assert.match(head, /^HTTP\/1\.1 400 /);
    assert.match(head, /\r\napi-version: 4\.0/i);
    assert.match(head, /\r\nx-request-id: /i);
    assert.equal(
      JSON.parse(body).extra[0].developer_reason,
      'an HTTP/1.1 request must name its Host (RFC 9112, section 3.2)',
    );
    client.socket.destroy();
    const old = await openRaw(port);
    old.socket.write('GET /health HTTP/1.0\r\n\r\n');
    assert.match(await old.closed(), /^HTTP\/1\.1 200 [\s\S]*\{"status":"ok"\}$/);
  });

  it('answers garbage sent after a whole answer on a kept-alive connection', async () => {
    const client = await openRaw(port);
    client.socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await client.receives('{"status":"ok"}');
    client.socket.write(GARBAGE);
    const written = await client.closed();
    const health = written.indexOf('{"status":"ok"}') + '{"status":"ok"}'.length;
    assert.match(written, /^HTTP\/1\.1 200 /);
    assertRawError(written.slice(health), 400);
  });

  it('never writes into an answer being written: garbage meanwhile closes the connection after what was sent', async () => {
    const client = await openRaw(port);
    client.socket.write('GET /test/slow-answer HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await client.receives('first-half');
    client.socket.write(GARBAGE);
    // The connection closes once what was written is out; the answer's second half never comes.
    const written = await client.closed();
    releaseSlowAnswer();
    assert.match(written, /^HTTP\/1\.1 200 /);
    assert.ok(written.endsWith('first-half'), `nothing after the half written: ${JSON.stringify(written)}`);
    assert.doesNotMatch(written, /HTTP\/1\.1 400/);
  });
});
