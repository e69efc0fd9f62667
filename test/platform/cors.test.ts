import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { ConfigError, loadConfig } from '../../src/config.js';
import { buildTestApp, suiteScope } from '../helpers/build-test-app.js';

const SITE = 'https://site.example';
const OVERLAY = 'http://overlay.example:8443';
const STRANGER = 'https://stranger.example';

const EXPOSED = [
  'X-Cache',
  'Age',
  'Retry-After',
  'RateLimit',
  'RateLimit-Policy',
  'API-Version',
  'X-Request-Id',
  'WWW-Authenticate',
  'Location',
];

/** A browser's preflight before a request with `method` and `headers`. */
const preflight = (url: string, origin: string, method = 'GET', headers = 'authorization') => ({
  method: 'OPTIONS' as const,
  url,
  headers: {
    origin,
    'access-control-request-method': method,
    'access-control-request-headers': headers,
  },
});

type Reply = { statusCode: number; headers: Record<string, unknown>; body: string };

const corsHeadersOf = (reply: Reply) =>
  Object.keys(reply.headers).filter((name) => name.startsWith('access-control-'));

const varyOf = (reply: Reply) =>
  String(reply.headers.vary ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase());

function assertErrorResponse(reply: Reply, status: number, name: string) {
  assert.equal(reply.statusCode, status, reply.body);
  assert.match(String(reply.headers['content-type']), /^application\/json/);
  const body = JSON.parse(reply.body);
  assert.equal(body.success, false);
  assert.equal(body.extra[0].name, name);
}

/** The headers every answer to an allowed origin carries, errors included. */
function assertAllowed(reply: Reply, origin: string) {
  assert.equal(reply.headers['access-control-allow-origin'], origin, JSON.stringify(reply.headers));
  assert.equal(reply.headers['access-control-allow-credentials'], undefined, 'no credentials');
  const exposed = String(reply.headers['access-control-expose-headers'])
    .split(',')
    .map((name) => name.trim());
  for (const name of EXPOSED) assert.ok(exposed.includes(name), `${name} is exposed: ${exposed}`);
  assert.ok(varyOf(reply).includes('origin'), 'Vary: Origin');
}

describe('CORS off (CORS_ORIGINS unset, the default)', () => {
  let app: FastifyInstance;
  const scope = suiteScope();
  before(async () => {
    ({ app } = await buildTestApp(scope));
  });

  it('adds no CORS header, even for an origin', async () => {
    const reply = await app.inject({ method: 'GET', url: '/health', headers: { origin: SITE } });
    assert.equal(reply.statusCode, 200);
    assert.deepEqual(corsHeadersOf(reply), []);
  });

  it('answers a preflight as any OPTIONS request: 405 with Allow', async () => {
    const reply = await app.inject(preflight('/health', SITE));
    assertErrorResponse(reply, 405, 'METHOD_NOT_ALLOWED');
    assert.equal(reply.headers.allow, 'GET, HEAD');
    assert.deepEqual(corsHeadersOf(reply), []);
  });
});

describe('CORS on (CORS_ORIGINS lists origins)', () => {
  let app: FastifyInstance;
  const scope = suiteScope();
  before(async () => {
    ({ app } = await buildTestApp(scope, {
      env: { CORS_ORIGINS: `${SITE}, ${OVERLAY}`, RATE_LIMIT_AUTH_PER_MINUTE: '2' },
    }));
  });

  it('lets a listed origin read an answer, and names the headers it may read', async () => {
    for (const origin of [SITE, OVERLAY]) {
      const reply = await app.inject({ method: 'GET', url: '/health', headers: { origin } });
      assert.equal(reply.statusCode, 200);
      assertAllowed(reply, origin);
    }
  });

  it('keeps Vary: Origin beside Vary: Accept-Encoding on answers that vary by both', async () => {
    for (const url of ['/openapi.json', '/docs']) {
      const reply = await app.inject({
        method: 'GET',
        url,
        headers: { origin: SITE, 'accept-encoding': 'br' },
      });
      assert.equal(reply.statusCode, 200);
      assertAllowed(reply, SITE);
      assert.ok(varyOf(reply).includes('accept-encoding'), `${url}: Vary: Accept-Encoding`);
    }
  });

  it('lets a listed origin read errors too: 401 with WWW-Authenticate, 404', async () => {
    const unauthorized = await app.inject({ method: 'GET', url: '/player/Notch', headers: { origin: SITE } });
    assertErrorResponse(unauthorized, 401, 'TOKEN_MISSING');
    assert.ok(unauthorized.headers['www-authenticate']);
    assertAllowed(unauthorized, SITE);

    const notFound = await app.inject({ method: 'GET', url: '/nowhere', headers: { origin: SITE } });
    assertErrorResponse(notFound, 404, 'ROUTE_NOT_FOUND');
    assertAllowed(notFound, SITE);
  });

  it('answers a preflight for a guarded route 204, without a token', async () => {
    for (const url of ['/player/Notch', '/gamemode/profiles/Notch?x=1', '/nowhere']) {
      const reply = await app.inject(preflight(url, SITE));
      assert.equal(reply.statusCode, 204, `${url}: ${reply.body}`);
      assert.equal(reply.body, '');
      assertAllowed(reply, SITE);
      assert.equal(reply.headers['access-control-allow-methods'], 'GET, POST, PUT, PATCH, DELETE');
      const allowedHeaders = String(reply.headers['access-control-allow-headers']).toLowerCase();
      assert.match(allowedHeaders, /\bauthorization\b/);
      assert.match(allowedHeaders, /\bcontent-type\b/);
      assert.equal(reply.headers['access-control-max-age'], '600');
      assert.equal(reply.headers['api-version'], '4.0', 'stamped like every answer');
      assert.ok(reply.headers['x-request-id']);
    }
  });

  it('does not count preflights against a route rate limit, and a 429 is readable', async () => {
    for (let i = 0; i < 5; i += 1) {
      assert.equal((await app.inject(preflight('/auth/refresh', SITE, 'POST'))).statusCode, 204);
    }
    const refresh = () =>
      app.inject({ method: 'POST', url: '/auth/refresh', headers: { origin: SITE }, payload: {} });
    assert.notEqual((await refresh()).statusCode, 429, 'the preflights spent none of the limit');
    assert.notEqual((await refresh()).statusCode, 429);
    const limited = await refresh();
    assertErrorResponse(limited, 429, 'RATE_LIMITED');
    assertAllowed(limited, SITE);
  });

  it('keeps 404 and 405 apart for the other methods', async () => {
    const wrongMethod = await app.inject({ method: 'DELETE', url: '/health', headers: { origin: SITE } });
    assertErrorResponse(wrongMethod, 405, 'METHOD_NOT_ALLOWED');
    assert.equal(wrongMethod.headers.allow, 'GET, HEAD');
    assertAllowed(wrongMethod, SITE);
    assertErrorResponse(await app.inject({ method: 'DELETE', url: '/nowhere' }), 404, 'ROUTE_NOT_FOUND');
  });

  it('answers an OPTIONS request that is no preflight as when CORS is off', async () => {
    const bare = await app.inject({ method: 'OPTIONS', url: '/health' });
    assertErrorResponse(bare, 405, 'METHOD_NOT_ALLOWED');
    assert.equal(bare.headers.allow, 'GET, HEAD');
    assert.deepEqual(corsHeadersOf(bare), []);

    const fromSite = await app.inject({ method: 'OPTIONS', url: '/health', headers: { origin: SITE } });
    assertErrorResponse(fromSite, 405, 'METHOD_NOT_ALLOWED');
    assertAllowed(fromSite, SITE);
    assert.equal(fromSite.headers['access-control-allow-methods'], undefined);

    assertErrorResponse(await app.inject({ method: 'OPTIONS', url: '/nowhere' }), 404, 'ROUTE_NOT_FOUND');
  });

  it('gives an origin not listed no CORS header: the request is served, the browser blocks it', async () => {
    // Origins are compared exactly, as browsers serialize them.
    for (const origin of [STRANGER, 'https://site.example:443', 'http://site.example', 'null']) {
      const reply = await app.inject({ method: 'GET', url: '/health', headers: { origin } });
      assert.equal(reply.statusCode, 200);
      assert.deepEqual(corsHeadersOf(reply), [], origin);
      assert.ok(varyOf(reply).includes('origin'), 'Vary: Origin');

      const refused = await app.inject(preflight('/player/Notch', origin));
      assertErrorResponse(refused, 405, 'METHOD_NOT_ALLOWED');
      assert.deepEqual(corsHeadersOf(refused), [], origin);
    }
  });

  it('says Vary: Origin on an answer without Origin too', async () => {
    const reply = await app.inject({ method: 'GET', url: '/health' });
    assert.deepEqual(corsHeadersOf(reply), []);
    assert.ok(varyOf(reply).includes('origin'));
  });

  it('keeps the catch-all OPTIONS route out of the OpenAPI document', async () => {
    const document = JSON.parse((await app.inject({ method: 'GET', url: '/openapi.json' })).body);
    assert.ok(Object.keys(document.paths).length > 0);
    for (const operations of Object.values<Record<string, unknown>>(document.paths)) {
      assert.equal(operations.options, undefined);
    }
  });
});

describe('CORS for any origin (CORS_ORIGINS=*)', () => {
  let app: FastifyInstance;
  const scope = suiteScope();
  before(async () => {
    ({ app } = await buildTestApp(scope, { env: { CORS_ORIGINS: '*' } }));
  });

  it('answers every origin with Access-Control-Allow-Origin: * and no credentials', async () => {
    const reply = await app.inject({ method: 'GET', url: '/health', headers: { origin: STRANGER } });
    assertAllowed(reply, '*');
    const check = await app.inject(preflight('/player/Notch', STRANGER));
    assert.equal(check.statusCode, 204);
    assertAllowed(check, '*');
  });
});

describe('CORS_ORIGINS', () => {
  it('is empty (CORS off) unless set', () => {
    assert.deepEqual(loadConfig({}).server.corsOrigins, []);
    assert.deepEqual(loadConfig({ CORS_ORIGINS: '' }).server.corsOrigins, []);
  });

  it('reads a comma-separated list of origins, or *', () => {
    assert.deepEqual(loadConfig({ CORS_ORIGINS: `${SITE} ,${OVERLAY}` }).server.corsOrigins, [SITE, OVERLAY]);
    assert.deepEqual(loadConfig({ CORS_ORIGINS: '*' }).server.corsOrigins, ['*']);
  });

  for (const value of [
    'example.com',
    'https://x.com/path',
    'https://x.com/',
    `${SITE},example.com`,
    '*,https://x.com',
    'ftp://x.com',
    'https://Example.com',
    'https://x.com:443',
    'http://x.com:80',
    'https://user@x.com',
    'https://x.com?q=1',
    'https://x.com#top',
    'https://x.com:99999',
  ]) {
    it(`refuses ${JSON.stringify(value)}, naming CORS_ORIGINS`, () => {
      assert.throws(
        () => loadConfig({ CORS_ORIGINS: value }),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError);
          assert.equal(error.problems.length, 1, error.message);
          assert.match(error.message, /CORS_ORIGINS/);
          return true;
        },
      );
    });
  }

  it('says which entry is wrong and what a browser would send', () => {
    assert.throws(
      () => loadConfig({ CORS_ORIGINS: `${SITE},https://Example.COM:443` }),
      /CORS_ORIGINS.*"https:\/\/Example\.COM:443".*https:\/\/example\.com\b/,
    );
  });
});
