import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Type } from 'typebox';
import { errorResponses } from '../../src/platform/error-response.js';
import { responseDoc } from '../../src/platform/http/response-docs.js';
import { buildTestApp } from '../helpers/build-test-app.js';
import { type Exchange, OpenApiConformance } from '../helpers/openapi-conformance.js';
import { bearer, issueToken } from '../helpers/tokens.js';

const PLATFORM = { 'api-version': '4.0', 'x-request-id': 'req-1' };

describe('answers checked against the OpenAPI document', () => {
  it("checks every answer of a test's app, and finds nothing wrong in the service's own", async (t) => {
    const { app, config, conformance } = await buildTestApp(t);
    const token = await issueToken(app, config, { grants: [] });
    const reader = await issueToken(app, config, { grants: ['player:read'] });
    const answers = await Promise.all([
      app.inject({ method: 'GET', url: '/health' }),
      app.inject({ method: 'GET', url: '/ready' }),
      app.inject({ method: 'GET', url: '/openapi.json' }),
      app.inject({ method: 'GET', url: '/player/bad!name', headers: bearer(reader) }),
      app.inject({ method: 'GET', url: '/player/Notch' }),
      app.inject({ method: 'GET', url: '/player/Notch', headers: bearer(token) }),
      app.inject({
        method: 'POST',
        url: '/auth/refresh',
        headers: { 'content-type': 'text/plain' },
        payload: 'x',
      }),
      app.inject({
        method: 'POST',
        url: '/auth/refresh',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ token: 'a'.repeat(config.server.bodyLimitBytes) }),
      }),
      app.inject({ method: 'HEAD', url: '/health' }),
      app.inject({ method: 'GET', url: '/nowhere' }),
    ]);
    assert.deepEqual(
      answers.map((answer) => answer.statusCode),
      [200, 200, 200, 400, 401, 403, 415, 413, 200, 404],
    );
    assert.deepEqual(conformance.take(), []);
    assert.equal(conformance.checked, 9, 'every answer but the not-found handler is checked');
  });

  it('reports an answer that differs from the document: body, status, headers, content type', async (t) => {
    const { app, conformance } = await buildTestApp(t);
    const documented = (operationId: string, headers = {}) => ({
      schema: {
        operationId,
        security: [],
        response: {
          200: responseDoc(Type.Object({ ok: Type.Boolean() }, { additionalProperties: false }), {
            description: 'A sample.',
            headers,
          }),
          ...errorResponses(400),
        },
      },
    });
    app.get('/drift/body', documented('driftBody'), async () => ({ ok: 'yes', extra: 1 }));
    app.get('/drift/status', documented('driftStatus'), async (_request, reply) =>
      reply.code(418 as 200).send({}),
    );
    app.get(
      '/drift/header',
      documented('driftHeader', {
        'X-Sample': { description: 'Always sent.', schema: { type: 'integer' }, required: true },
        'X-Sometimes': { description: 'Digits when sent.', schema: { type: 'integer' } },
      }),
      async (_request, reply) => reply.header('x-sometimes', 'many').send({ ok: true }),
    );
    app.get('/drift/type', documented('driftType'), async (_request, reply) =>
      reply.type('text/plain').send('ok'),
    );
    app.get('/drift/undeclared', documented('driftUndeclared'), async (_request, reply) =>
      reply.header('x-surprise', '1').header('connection', 'keep-alive').send({ ok: true }),
    );

    for (const url of ['/drift/body', '/drift/status', '/drift/header', '/drift/type', '/drift/undeclared'])
      await app.inject({ method: 'GET', url });
    const found = conformance.take();
    assert.equal(found.length, 6, found.join('\n'));
    assert.match(
      found[0] ?? '',
      /GET \/drift\/body .* answered 200: body: \(body\) must NOT have additional properties \(extra\); \/ok must be boolean/,
    );
    assert.match(
      found[1] ?? '',
      /answered 418: status 418 is not declared \(declared: 200, 400, 413, 415, 500, 503\)/,
    );
    assert.match(found[2] ?? '', /answered 200: required header X-Sample is missing/);
    assert.match(found[3] ?? '', /answered 200: header X-Sometimes: "many" must be integer/);
    assert.match(
      found[4] ?? '',
      /answered 200: content type text\/plain is not declared \(declared: application\/json\)/,
    );
    // A header no document declares is reported; the transport's own (Connection) are not.
    assert.match(
      found[5] ?? '',
      /GET \/drift\/undeclared .* answered 200: header x-surprise is not declared$/,
    );

    // What build-test-app.ts runs when a test ends (or after each test of a suite scope): it fails the test.
    await app.inject({ method: 'GET', url: '/drift/body' });
    assert.throws(
      () => conformance.assertConforms(),
      /1 response\(s\) differ from the OpenAPI document \(\/openapi\.json\):\n {2}GET \/drift\/body/,
    );
    conformance.assertConforms();
  });
});

describe('the document against hand-made answers', () => {
  it("catches the drifts it was written for: profiles' throttle, refresh's 413", async (t) => {
    const { app } = await buildTestApp(t);
    await app.ready();
    const verdict = new OpenApiConformance(app.swagger() as Record<string, unknown>);
    const profiles = (status: number, body: unknown, headers: Record<string, string> = {}): Exchange => ({
      method: 'GET',
      route: '/gamemode/profiles/:player',
      url: '/gamemode/profiles/Notch',
      status,
      headers: { ...PLATFORM, 'content-type': 'application/json; charset=utf-8', ...headers },
      body: JSON.stringify(body),
    });
    const cached = {
      'x-cache': 'HIT',
      age: '3',
      'cache-control': 'private, max-age=57',
      vary: 'accept-encoding',
    };

    assert.deepEqual(verdict.check(profiles(200, { success: true, profiles: [] }, cached)), []);
    assert.deepEqual(verdict.check(profiles(200, { success: true, throttle: false, profiles: [] }, cached)), [
      'body: (body) must NOT have additional properties (throttle)',
    ]);
    assert.deepEqual(verdict.check(profiles(200, { success: true, profiles: [] })), [
      'required header X-Cache is missing',
      'required header Age is missing',
      'required header Cache-Control is missing',
      'required header Vary is missing',
    ]);
    assert.deepEqual(
      verdict.check(
        profiles(200, { success: true, profiles: [] }, { ...cached, 'content-encoding': 'zstd' }),
      ),
      ['header Content-Encoding: "zstd" must be equal to one of the allowed values (["br","gzip"])'],
    );
    const failure = {
      success: false,
      cause: 'the Hypixel API cannot be reached',
      throttle: false,
      profiles: null,
    };
    assert.deepEqual(
      verdict.check(profiles(503, failure, { 'cache-control': 'no-store', 'retry-after': '1' })),
      [],
    );
    const databaseOut = {
      success: false,
      code: 503,
      cause: 'Service unavailable',
      documentation: '/docs#error-DEPENDENCY_UNAVAILABLE',
      msTime: 1,
      extra: [{ code: 19003, name: 'DEPENDENCY_UNAVAILABLE', reason: 'r', developer_reason: 'd' }],
    };
    assert.deepEqual(verdict.check(profiles(503, databaseOut, { 'cache-control': 'no-store' })), []);
    assert.deepEqual(verdict.check(profiles(418, failure)), [
      'status 418 is not declared (declared: 200, 400, 401, 403, 404, 413, 414, 415, 429, 500, 502, 503, 504)',
    ]);

    // The profiles' commonly used fields are typed: a profile that breaks them is caught, any other field passes.
    const profile = { profile_id: 'ec1811e6-822b-4843-bcd4-fef82f75deb7', members: {}, anything: [1, 'x'] };
    assert.deepEqual(verdict.check(profiles(200, { success: true, profiles: [profile] }, cached)), []);
    assert.deepEqual(
      verdict.check(profiles(200, { success: true, profiles: [{ ...profile, selected: 'yes' }] }, cached)),
      ['body: /profiles/0/selected must be boolean'],
    );
    assert.deepEqual(
      verdict.check(
        profiles(
          200,
          { success: true, profiles: [{ ...profile, members: { a: { currencies: { coin_purse: '5' } } } }] },
          cached,
        ),
      ),
      ['body: /profiles/0/members/a/currencies/coin_purse must be number'],
    );
    assert.deepEqual(
      verdict.check(profiles(200, { success: true, profiles: [] }, { ...cached, etag: '"x"' })),
      ['header etag is not declared'],
    );

    const tooLarge: Exchange = {
      method: 'POST',
      route: '/auth/refresh',
      url: '/auth/refresh',
      status: 413,
      headers: {
        ...PLATFORM,
        'content-type': 'application/json; charset=utf-8',
        'cache-control': 'no-store',
      },
      body: JSON.stringify({ ...databaseOut, code: 413 }),
    };
    assert.deepEqual(verdict.check(tooLarge), []);
    assert.deepEqual(verdict.check({ ...tooLarge, headers: { 'content-type': 'application/json' } }), [
      'required header API-Version is missing',
      'required header X-Request-Id is missing',
      'required header Cache-Control is missing',
    ]);
  });
});
