import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { errorCatalogue } from '../../src/platform/errors.js';
import { buildTestApp, suiteScope } from '../helpers/build-test-app.js';

/** Checks a reply is an ErrorResponse of the given status whose problems have the given names. */
function assertErrorResponse(
  reply: { statusCode: number; headers: Record<string, unknown>; body: string },
  status: number,
  names: string[],
) {
  assert.equal(reply.statusCode, status, reply.body);
  assert.match(String(reply.headers['content-type']), /^application\/json/);
  assert.equal(reply.headers['api-version'], '4.0');
  assert.ok(reply.headers['x-request-id']);
  assert.equal(reply.headers['cache-control'], 'no-store', 'an error is never kept by a cache');
  const body = JSON.parse(reply.body);
  assert.deepEqual(Object.keys(body).sort(), [
    'cause',
    'code',
    'documentation',
    'extra',
    'msTime',
    'success',
  ]);
  assert.equal(body.success, false);
  assert.equal(body.code, status);
  assert.equal(typeof body.cause, 'string');
  assert.ok(Number.isInteger(body.msTime) && Math.abs(body.msTime - Date.now()) < 60_000);
  assert.match(body.documentation, /\/docs#error-[A-Z_]+$/);
  assert.deepEqual(
    body.extra.map((problem: { name: string }) => problem.name),
    names,
  );
  for (const problem of body.extra) {
    assert.deepEqual(Object.keys(problem).sort(), ['code', 'developer_reason', 'name', 'reason']);
    assert.equal(errorCatalogue.find((kind) => kind.name === problem.name)?.code, problem.code);
  }
  assert.doesNotMatch(reply.body, /statusCode|"error":|at .*\.ts:\d+|FST_/);
  return body;
}

describe('error model', () => {
  let app: FastifyInstance;
  const scope = suiteScope();
  before(async () => {
    ({ app } = await buildTestApp(scope));
    app.post(
      '/test/echo',
      {
        schema: {
          body: Type.Object(
            {
              name: Type.String({ minLength: 1, maxLength: 8 }),
              grants: Type.Array(Type.Enum(['player:read', 'ping:read']), { minItems: 1 }),
              nested: Type.Optional(Type.Object({ count: Type.Integer({ minimum: 0 }) })),
            },
            { additionalProperties: false },
          ),
        },
      },
      async (request) => request.body,
    );
    app.get('/test/crash', async () => {
      throw new Error('secret internal detail at /srv/app/db.ts:42');
    });
    app.get(
      '/test/bounded',
      { schema: { querystring: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 100 }) }) } },
      async (request) => request.query,
    );
    app.get(
      '/test/params/:id',
      { schema: { params: Type.Object({ id: Type.Integer({ minimum: 1 }) }) } },
      async (request) => request.params,
    );
  });

  it('answers an unknown route with 404 ROUTE_NOT_FOUND', async () => {
    assertErrorResponse(await app.inject({ method: 'GET', url: '/nowhere' }), 404, ['ROUTE_NOT_FOUND']);
    // However long the path, the answer quotes a little of it: it stays small.
    const long = await app.inject({ method: 'GET', url: `/${'a'.repeat(15_000)}` });
    assertErrorResponse(long, 404, ['ROUTE_NOT_FOUND']);
    assert.ok(long.body.length < 1024, `an answer of ${long.body.length} bytes`);
  });

  it('answers a wrong method with 405 METHOD_NOT_ALLOWED and an Allow header', async () => {
    const reply = await app.inject({ method: 'DELETE', url: '/health' });
    assertErrorResponse(reply, 405, ['METHOD_NOT_ALLOWED']);
    assert.equal(reply.headers.allow, 'GET, HEAD');
  });

  it('answers malformed JSON with 400 MALFORMED_JSON', async () => {
    const reply = await app.inject({
      method: 'POST',
      url: '/test/echo',
      headers: { 'content-type': 'application/json' },
      payload: '{"name": "a",',
    });
    const body = assertErrorResponse(reply, 400, ['MALFORMED_JSON']);
    assert.match(body.extra[0].developer_reason, /not valid JSON/);
  });

  it('refuses duplicate keys and __proto__ keys as malformed', async () => {
    for (const payload of [
      '{"name":"a","name":"b","grants":["ping:read"]}',
      '{"name":"a","grants":["ping:read"],"__proto__":{"x":1}}',
    ]) {
      const reply = await app.inject({
        method: 'POST',
        url: '/test/echo',
        headers: { 'content-type': 'application/json' },
        payload,
      });
      assertErrorResponse(reply, 400, ['MALFORMED_JSON']);
    }
  });

  it('answers another content type with 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const reply = await app.inject({
      method: 'POST',
      url: '/test/echo',
      headers: { 'content-type': 'text/plain' },
      payload: 'hi',
    });
    assertErrorResponse(reply, 415, ['UNSUPPORTED_MEDIA_TYPE']);
  });

  it('answers a compressed body with 415 (bodies are never decompressed), an identity one as usual', async () => {
    const body = JSON.stringify({ name: 'a', grants: ['ping:read'] });
    for (const encoding of ['gzip', 'br', 'GZIP', 'deflate, gzip', 'x-anything']) {
      const reply = await app.inject({
        method: 'POST',
        url: '/test/echo',
        headers: { 'content-type': 'application/json', 'content-encoding': encoding },
        payload: gzipSync(body),
      });
      const refused = assertErrorResponse(reply, 415, ['UNSUPPORTED_MEDIA_TYPE']);
      assert.match(refused.extra[0].developer_reason, /Content-Encoding/);
      assert.equal(reply.headers['accept-encoding'], 'identity');
    }
    for (const encoding of ['identity', ' Identity ', '']) {
      const reply = await app.inject({
        method: 'POST',
        url: '/test/echo',
        headers: { 'content-type': 'application/json', 'content-encoding': encoding },
        payload: body,
      });
      assert.equal(reply.statusCode, 200, `${encoding}: ${reply.body}`);
    }
  });

  it('answers a JSON body in another charset than UTF-8 with 415, and takes UTF-8 however it is named', async () => {
    const body = JSON.stringify({ name: 'a', grants: ['ping:read'] });
    const post = (type: string) =>
      app.inject({ method: 'POST', url: '/test/echo', headers: { 'content-type': type }, payload: body });
    for (const type of [
      'application/json; charset=utf-16',
      'application/json;charset=ISO-8859-1',
      'application/json; charset="latin1"',
      'application/json; charset=',
    ]) {
      const refused = assertErrorResponse(await post(type), 415, ['UNSUPPORTED_MEDIA_TYPE']);
      assert.match(refused.extra[0].developer_reason, /UTF-8/);
    }
    for (const type of [
      'application/json',
      'application/json; charset=utf-8',
      'application/json;charset=UTF-8',
      'application/json; charset="utf-8"',
      'application/json; charset=utf8',
    ]) {
      const reply = await post(type);
      assert.equal(reply.statusCode, 200, `${type}: ${reply.body}`);
    }
  });

  it('answers a body over the limit with 413 BODY_TOO_LARGE', async () => {
    const payload = JSON.stringify({ name: 'x'.repeat(70 * 1024), grants: ['ping:read'] });
    const reply = await app.inject({
      method: 'POST',
      url: '/test/echo',
      headers: { 'content-type': 'application/json' },
      payload,
    });
    assertErrorResponse(reply, 413, ['BODY_TOO_LARGE']);
  });

  it('lists one problem per invalid field, each with its path', async () => {
    const reply = await app.inject({
      method: 'POST',
      url: '/test/echo',
      payload: {
        name: 'far too long a name',
        grants: ['player:read', 'admin'],
        nested: { count: -1 },
        surprise: true,
      },
    });
    const body = assertErrorResponse(reply, 400, [
      'UNKNOWN_FIELD',
      'INVALID_FIELD',
      'INVALID_FIELD',
      'INVALID_FIELD',
    ]);
    assert.equal(body.cause, 'Invalid request body');
    const reasons = body.extra.map((problem: { reason: string; developer_reason: string }) => [
      problem.reason,
      problem.developer_reason,
    ]);
    assert.deepEqual(reasons, [
      ['surprise is not a field of this request', 'body/surprise is not allowed here; remove it'],
      ['name must NOT have more than 8 characters', 'body/name must NOT have more than 8 characters'],
      [
        'grants[1] must be one of player:read, ping:read',
        'body/grants/1 must be one of player:read, ping:read',
      ],
      ['nested.count must be >= 0', 'body/nested/count must be >= 0'],
    ]);
  });

  it('names missing fields and a missing body', async () => {
    const missingField = await app.inject({ method: 'POST', url: '/test/echo', payload: { name: 'a' } });
    const body = assertErrorResponse(missingField, 400, ['MISSING_FIELD']);
    assert.equal(body.extra[0].reason, 'grants is required');
    const noBody = await app.inject({
      method: 'POST',
      url: '/test/echo',
      headers: { 'content-type': 'application/json' },
    });
    assertErrorResponse(noBody, 400, ['MISSING_FIELD']);
  });

  it('does not coerce body types: "5" is not an integer', async () => {
    const reply = await app.inject({
      method: 'POST',
      url: '/test/echo',
      payload: { name: 'a', grants: ['ping:read'], nested: { count: '5' } },
    });
    assertErrorResponse(reply, 400, ['INVALID_FIELD']);
  });

  it('validates path parameters (coerced from text) with the same model', async () => {
    assert.equal((await app.inject({ method: 'GET', url: '/test/params/7' })).statusCode, 200);
    const body = assertErrorResponse(await app.inject({ method: 'GET', url: '/test/params/zero' }), 400, [
      'INVALID_FIELD',
    ]);
    assert.equal(body.cause, 'Invalid path parameter');
  });

  it('refuses a number in a path or query that is not finite (Ajv lets Infinity past minimum and maximum)', async () => {
    for (const url of [
      '/test/params/1e400',
      '/test/params/-1e400',
      '/test/bounded?limit=1e400',
      '/test/bounded?limit=-1e999',
    ]) {
      const body = assertErrorResponse(await app.inject({ method: 'GET', url }), 400, ['INVALID_FIELD']);
      assert.match(
        body.extra[0]?.developer_reason ?? '',
        /^(params\/id|query\/limit) must be a finite number$/,
        url,
      );
    }
    assert.equal((await app.inject({ method: 'GET', url: '/test/bounded?limit=1e1' })).statusCode, 200);
  });

  it('answers an unexpected exception with 500 INTERNAL_ERROR and no internals', async () => {
    const reply = await app.inject({ method: 'GET', url: '/test/crash' });
    assertErrorResponse(reply, 500, ['INTERNAL_ERROR']);
    assert.doesNotMatch(reply.body, /secret internal detail|db\.ts|Error:/);
  });

  it('answers a malformed URL with 400 and the usual headers', async () => {
    assertErrorResponse(await app.inject({ method: 'GET', url: '/health/%E0%A4%A' }), 400, ['BAD_REQUEST']);
  });

  it('keeps a sane client X-Request-Id and replaces an unsafe one', async () => {
    const kept = await app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': 'abc-123' } });
    assert.equal(kept.headers['x-request-id'], 'abc-123');
    const replaced = await app.inject({
      method: 'GET',
      url: '/health',
      headers: { 'x-request-id': 'evil\nline' },
    });
    assert.notEqual(replaced.headers['x-request-id'], 'evil\nline');
    assert.match(String(replaced.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  });

  it('serves a GET that carries Content-Type: application/json with {} or nothing', async () => {
    for (const payload of ['{}', '']) {
      const reply = await app.inject({
        method: 'GET',
        url: '/health',
        headers: { 'content-type': 'application/json' },
        payload,
      });
      assert.equal(reply.statusCode, 200);
    }
  });

  it('never builds links from the Host header: relative without PUBLIC_URL', async () => {
    for (const host of ['evil.example/phish?x=', 'evil.example', 'localhost:80']) {
      const reply = await app.inject({ method: 'GET', url: '/nowhere', headers: { host } });
      const body = assertErrorResponse(reply, 404, ['ROUTE_NOT_FOUND']);
      assert.equal(body.documentation, '/docs#error-ROUTE_NOT_FOUND', host);
    }
  });

  it('builds links from PUBLIC_URL when it is set, whatever the Host header says', async (t) => {
    const { app: public_ } = await buildTestApp(t, { env: { PUBLIC_URL: 'https://api.example.com/' } });
    const reply = await public_.inject({ method: 'GET', url: '/nowhere', headers: { host: 'evil.example' } });
    const body = assertErrorResponse(reply, 404, ['ROUTE_NOT_FOUND']);
    assert.equal(body.documentation, 'https://api.example.com/docs#error-ROUTE_NOT_FOUND');
  });

  it('refuses JSON nested deeper than the limit with 400 BODY_TOO_DEEP, unauthenticated, at any depth', async (t) => {
    const { app: roomy } = await buildTestApp(t, { env: { BODY_LIMIT_BYTES: String(1024 * 1024) } });
    for (const levels of [1000, 8600, 100_000]) {
      for (const payload of [
        `${'['.repeat(levels)}${']'.repeat(levels)}`,
        `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`,
      ]) {
        const reply = await roomy.inject({
          method: 'POST',
          url: '/auth/refresh',
          headers: { 'content-type': 'application/json' },
          payload,
        });
        const body = assertErrorResponse(reply, 400, ['BODY_TOO_DEEP']);
        assert.match(body.extra[0].developer_reason, /nested more than 64 levels/);
      }
    }
  });

  it('gives every catalogue entry a distinct code and name', () => {
    assert.equal(new Set(errorCatalogue.map((kind) => kind.code)).size, errorCatalogue.length);
    for (const kind of errorCatalogue) assert.match(kind.name, /^[A-Z][A-Z0-9_]+$/);
  });
});

describe('the error catalogue', () => {
  it('says for every kind how a developer fixes it: a sentence of its own', () => {
    const fixes = new Set<string>();
    for (const kind of errorCatalogue) {
      assert.equal(typeof kind.fix, 'string', kind.name);
      assert.ok(kind.fix.trim().length >= 15, `${kind.name}: "${kind.fix}"`);
      assert.match(kind.fix, /[.!]$/, `${kind.name}: a sentence`);
      assert.notEqual(kind.fix, kind.reason, `${kind.name}: more than its reason`);
      fixes.add(kind.fix);
    }
    assert.ok(fixes.size > errorCatalogue.length * 0.9, 'fixes of their own, not one text for all');
  });
});
