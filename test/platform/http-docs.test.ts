import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import type { FastifyInstance } from 'fastify';
import { errorCatalogue } from '../../src/platform/errors.js';
import { buildTestApp, suiteScope } from '../helpers/build-test-app.js';

describe('OpenAPI and docs', () => {
  let app: FastifyInstance;
  const scope = suiteScope();
  before(async () => {
    ({ app } = await buildTestApp(scope));
  });

  it('serves a valid OpenAPI 3 document of version 4.0.0', async () => {
    const reply = await app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(reply.statusCode, 200);
    const document = JSON.parse(reply.body);
    assert.equal(document.info.version, '4.0.0');
    assert.match(document.openapi, /^3\./);
    await SwaggerParser.validate(structuredClone(document));
    assert.ok(document.paths['/health'].get);
    assert.ok(document.components.schemas.ErrorResponse);
    for (const kind of errorCatalogue) assert.ok(document.info.description.includes(kind.name));
  });

  it('names every operation with its own operationId', async () => {
    const document = JSON.parse((await app.inject({ method: 'GET', url: '/openapi.json' })).body) as {
      paths: Record<string, Record<string, { operationId?: string }>>;
    };
    const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => [`${method} ${path}`, operation.operationId]),
    );
    const missing = operations.filter(([, id]) => id === undefined).map(([name]) => name);
    assert.deepEqual(missing, []);
    const ids = operations.map(([, id]) => id);
    assert.equal(new Set(ids).size, ids.length, 'operationIds are unique');
  });

  it('answers a missing file of the explorer with 404, a present one with 200', async () => {
    for (const url of [
      '/docs/ui/static/nope.js',
      '/docs/ui/nope.js',
      '/docs/ui/static/../../../etc/passwd',
    ]) {
      const reply = await app.inject({ method: 'GET', url });
      assert.equal(reply.statusCode, 404, `${url}: ${reply.body}`);
      assert.equal(reply.json().extra[0].name, 'ROUTE_NOT_FOUND');
      assert.equal(reply.headers.allow, undefined);
    }
    const present = await app.inject({ method: 'GET', url: '/docs/ui/static/swagger-ui.css' });
    assert.equal(present.statusCode, 200);
    const wrongMethod = await app.inject({ method: 'POST', url: '/docs/ui/static/nope.js' });
    assert.equal(wrongMethod.statusCode, 405, 'a method the path never takes is still 405');
  });

  it('serves a docs page listing the endpoints and every error with its anchor', async () => {
    const reply = await app.inject({ method: 'GET', url: '/docs' });
    assert.equal(reply.statusCode, 200);
    assert.match(String(reply.headers['content-type']), /^text\/html/);
    assert.match(reply.body, /id="errors"/);
    assert.match(reply.body, /<code>\/ready<\/code>/);
    for (const kind of errorCatalogue)
      assert.match(reply.body, new RegExp(`id="error-${kind.name}".*${kind.code}`));
  });

  it('serves the interactive explorer from the package, offline', async () => {
    const page = await app.inject({ method: 'GET', url: '/docs/ui/' });
    assert.equal(page.statusCode, 200);
    const script = await app.inject({ method: 'GET', url: '/docs/ui/static/swagger-ui-bundle.js' });
    assert.equal(script.statusCode, 200);
    assert.ok(script.body.length > 100_000);
  });
});
