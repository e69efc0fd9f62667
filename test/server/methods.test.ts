import assert from 'node:assert/strict';
import { once } from 'node:events';
import { METHODS } from 'node:http';
import { connect } from 'node:net';
import { before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, suiteScope } from '../helpers/build-test-app.js';

const SITE = 'https://site.example';

/** An answer read off the wire: the status, the headers (lowercased names) and the body. */
interface WireAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly raw: string;
}

/**
 * Sends one request as written (`Connection: close`) over a new TCP connection and reads the answer until the
 * server closes it: any method Node parses, CONNECT included, with or without a body, whatever its framing.
 */
async function exchange(port: number, head: string, body = ''): Promise<WireAnswer> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.on('error', () => undefined);
  const closed = once(socket, 'close');
  socket.setTimeout(10_000, () => socket.destroy());
  socket.write(`${head}Connection: close\r\n\r\n${body}`);
  await closed;
  const raw = Buffer.concat(chunks).toString('utf8');
  const split = raw.indexOf('\r\n\r\n');
  assert.ok(split > 0, `a whole answer head for ${JSON.stringify(head)}, got ${JSON.stringify(raw)}`);
  const [statusLine = '', ...lines] = raw.slice(0, split).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let answerBody = raw.slice(split + 4);
  if (headers['transfer-encoding'] === 'chunked') answerBody = unchunk(answerBody);
  return { status: Number(statusLine.split(' ')[1]), headers, body: answerBody, raw };
}

function unchunk(text: string): string {
  let out = '';
  let rest = text;
  for (;;) {
    const end = rest.indexOf('\r\n');
    const size = Number.parseInt(rest.slice(0, end), 16);
    if (!(size > 0)) return out;
    out += rest.slice(end + 2, end + 2 + size);
    rest = rest.slice(end + 2 + size + 2);
  }
}

/** The forms a request of any method comes in: no body; a body with or without a type, in either framing. */
const BODIES: readonly { readonly label: string; readonly headers: string; readonly body: string }[] = [
  { label: 'no body', headers: '', body: '' },
  { label: 'an empty body', headers: 'Content-Length: 0\r\n', body: '' },
  { label: 'a body without Content-Type', headers: 'Content-Length: 7\r\n', body: '{"a":1}' },
  {
    label: 'a JSON body',
    headers: 'Content-Type: application/json\r\nContent-Length: 7\r\n',
    body: '{"a":1}',
  },
  {
    label: 'malformed JSON',
    headers: 'Content-Type: application/json\r\nContent-Length: 5\r\n',
    body: '{"a":',
  },
  { label: 'a text body', headers: 'Content-Type: text/plain\r\nContent-Length: 2\r\n', body: 'hi' },
  {
    label: 'a chunked body of a type no one takes',
    headers: 'Content-Type: ???\r\nTransfer-Encoding: chunked\r\n',
    body: '2\r\nhi\r\n0\r\n\r\n',
  },
];

/** Paths and the methods each takes (what a 405's Allow lists); none for an unknown path. */
const PATHS: readonly { readonly path: string; readonly allow: readonly string[] }[] = [
  { path: '/health', allow: ['GET', 'HEAD'] },
  { path: '/health?verbose=1', allow: ['GET', 'HEAD'] },
  { path: '/player/Notch', allow: ['GET', 'HEAD'] },
  { path: '/players', allow: ['POST'] },
  { path: '/nowhere', allow: [] },
  { path: '/player', allow: [] },
];

/** What an answer of the not-found handling must be: the service's ErrorResponse, nothing of Fastify's. */
function assertNotFoundAnswer(answer: WireAnswer, method: string, allow: readonly string[], what: string) {
  const status = allow.length > 0 ? 405 : 404;
  assert.equal(answer.status, status, `${what}: ${answer.raw}`);
  assert.match(answer.headers['content-type'] ?? '', /^application\/json/, what);
  assert.equal(answer.headers['api-version'], '4.0', what);
  assert.equal(answer.headers['cache-control'], 'no-store', what);
  if (status === 405) assert.equal(answer.headers.allow, allow.join(', '), what);
  else assert.equal(answer.headers.allow, undefined, what);
  assert.doesNotMatch(answer.raw, /FST_|fastify/i, what);
  if (method === 'HEAD') {
    assert.equal(answer.body, '', what);
    return;
  }
  const body = JSON.parse(answer.body);
  assert.equal(body.success, false, what);
  assert.equal(body.code, status, what);
  assert.equal(body.extra.length, 1, what);
  assert.equal(body.extra[0].name, status === 405 ? 'METHOD_NOT_ALLOWED' : 'ROUTE_NOT_FOUND', what);
}

for (const cors of [false, true]) {
  describe(`every method Node parses, on a real connection (CORS ${cors ? 'on' : 'off'})`, () => {
    const scope = suiteScope();
    let app: FastifyInstance;
    let port: number;
    before(async () => {
      ({ app } = await buildTestApp(scope, { env: cors ? { CORS_ORIGINS: SITE } : {} }));
      await app.listen({ host: '127.0.0.1', port: 0 });
      port = (app.server.address() as { port: number }).port;
    });

    it('knows every method of http.METHODS', () => {
      // The test's reach: a method Node adds later is covered by the loop below as it is.
      for (const method of ['QUERY', 'PROPFIND', 'SEARCH', 'PURGE', 'LOCK', 'MKCOL', 'CONNECT']) {
        assert.ok(METHODS.includes(method), method);
      }
    });

    it('answers a method a path does not take 405 with Allow, and an unknown path 404, in every form', async () => {
      for (const method of METHODS) {
        if (method === 'CONNECT') continue; // below: its request target is no path
        for (const { path, allow } of PATHS) {
          if (allow.includes(method)) continue;
          for (const { label, headers, body } of BODIES) {
            const answer = await exchange(port, `${method} ${path} HTTP/1.1\r\nHost: x\r\n${headers}`, body);
            assertNotFoundAnswer(answer, method, allow, `${method} ${path} with ${label}`);
          }
        }
      }
    });

    it('answers QUERY as any other method a path does not take, with or without Content-Type', async () => {
      const bare = await exchange(port, 'QUERY /health HTTP/1.1\r\nHost: x\r\n');
      assertNotFoundAnswer(bare, 'QUERY', ['GET', 'HEAD'], 'QUERY /health');
      const typed = await exchange(
        port,
        'QUERY /nowhere HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n',
        '{}',
      );
      assertNotFoundAnswer(typed, 'QUERY', [], 'QUERY /nowhere');
    });

    it('answers CONNECT the same way, then closes the connection', async () => {
      for (const { path, allow } of PATHS) {
        const answer = await exchange(port, `CONNECT ${path} HTTP/1.1\r\nHost: x\r\n`);
        assertNotFoundAnswer(answer, 'CONNECT', allow, `CONNECT ${path}`);
        assert.match(answer.headers.connection ?? '', /close/i);
      }
      // The usual target of a CONNECT, a host and port, is no path of the service.
      const proxy = await exchange(port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n');
      assertNotFoundAnswer(proxy, 'CONNECT', [], 'CONNECT example.com:443');
      const withData = await exchange(
        port,
        'CONNECT /health HTTP/1.1\r\nHost: x\r\n',
        'GET / HTTP/1.1\r\n\r\n',
      );
      assertNotFoundAnswer(withData, 'CONNECT', ['GET', 'HEAD'], 'CONNECT with data after it');
    });

    if (cors) {
      it('keeps the CORS preflight: 204 from a listed origin on any path, an error otherwise', async () => {
        const preflight = (path: string, origin: string, headers = '', body = '') =>
          exchange(
            port,
            `OPTIONS ${path} HTTP/1.1\r\nHost: x\r\nOrigin: ${origin}\r\n${headers}` +
              'Access-Control-Request-Method: GET\r\nAccess-Control-Request-Headers: authorization\r\n',
            body,
          );
        for (const path of ['/health', '/player/Notch', '/nowhere']) {
          for (const { label, headers, body } of BODIES) {
            const allowed = await preflight(path, SITE, headers, body);
            assert.equal(allowed.status, 204, `${path} with ${label}: ${allowed.raw}`);
            assert.equal(allowed.headers['access-control-allow-origin'], SITE);
            assert.match(allowed.headers['access-control-allow-methods'] ?? '', /GET/);
          }
        }
        const stranger = await preflight('/health', 'https://stranger.example');
        assertNotFoundAnswer(stranger, 'OPTIONS', ['GET', 'HEAD'], 'a preflight from an origin not listed');
        assert.equal(stranger.headers['access-control-allow-origin'], undefined);
        // A wrong method from a listed origin is readable by the page: the CORS headers are on the 405.
        const fromSite = await exchange(port, `PROPFIND /health HTTP/1.1\r\nHost: x\r\nOrigin: ${SITE}\r\n`);
        assertNotFoundAnswer(fromSite, 'PROPFIND', ['GET', 'HEAD'], 'PROPFIND from a listed origin');
        assert.equal(fromSite.headers['access-control-allow-origin'], SITE);
      });
    }

    it('still serves the methods a path takes', async () => {
      const health = await exchange(port, 'GET /health HTTP/1.1\r\nHost: x\r\n');
      assert.equal(health.status, 200, health.raw);
      const head = await exchange(port, 'HEAD /health HTTP/1.1\r\nHost: x\r\n');
      assert.equal(head.status, 200, head.raw);
      assert.equal(head.body, '');
    });
  });
}
