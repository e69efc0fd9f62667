import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import SwaggerParser from '@apidevtools/swagger-parser';
import type { FastifyInstance } from 'fastify';
import { DEVELOPER_GRANTS, OPERATOR_GRANTS } from '../../src/platform/auth/grants.js';
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
    // The catalogue, with how to fix each error, is the ErrorResponse schema's description (the explorer shows it
    // after the operations); the document's description, above the first operation, links to it instead.
    const catalogue = String(document.components.schemas.ErrorResponse.description);
    for (const kind of errorCatalogue) {
      assert.ok(catalogue.includes(`| ${kind.code} | ${kind.name} | ${kind.status} |`), kind.name);
      assert.ok(catalogue.includes(kind.fix.replace(/\|/g, '\\|')), `${kind.name}: its fix`);
    }
    assert.ok(!document.info.description.includes('| code |'), 'no table above the first operation');
    assert.match(document.info.description, /\[\/docs#errors\]\(\/docs#errors\)/);
  });

  it('serves the document and the page as fixed bodies: compressed copies, HEAD alike, 304 by ETag', async () => {
    for (const [url, type] of [
      ['/openapi.json', /^application\/json/],
      ['/docs', /^text\/html/],
    ] as const) {
      const plain = await app.inject({ method: 'GET', url });
      assert.equal(plain.statusCode, 200);
      assert.match(String(plain.headers['content-type']), type);
      assert.equal(plain.headers['content-encoding'], undefined);
      assert.equal(Number(plain.headers['content-length']), plain.rawPayload.length);
      const etag = String(plain.headers.etag);
      assert.match(etag, /^"[\w-]+"$/);
      for (const [encoding, decode] of [
        ['br', brotliDecompressSync],
        ['gzip', gunzipSync],
      ] as const) {
        const headers = { 'accept-encoding': encoding };
        const first = await app.inject({ method: 'GET', url, headers });
        const again = await app.inject({ method: 'GET', url, headers });
        assert.equal(first.headers['content-encoding'], encoding);
        assert.equal(
          first.headers.etag,
          `${etag.slice(0, -1)}-${encoding}"`,
          'each representation its own tag',
        );
        const cached = await app.inject({
          method: 'GET',
          url,
          headers: { ...headers, 'if-none-match': String(first.headers.etag) },
        });
        assert.equal(cached.statusCode, 304);
        assert.equal(first.headers.vary, 'accept-encoding');
        assert.deepEqual(decode(first.rawPayload), plain.rawPayload);
        assert.deepEqual(again.rawPayload, first.rawPayload, 'the copy is kept');
        assert.ok(first.rawPayload.length < plain.rawPayload.length / 3);
        const head = await app.inject({ method: 'HEAD', url, headers });
        assert.equal(head.headers['content-encoding'], encoding);
        assert.equal(head.headers['content-length'], first.headers['content-length']);
        assert.equal(head.rawPayload.length, 0);
      }
      for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
        const cached = await app.inject({ method: 'GET', url, headers: { 'if-none-match': ifNoneMatch } });
        assert.equal(cached.statusCode, 304, ifNoneMatch);
        assert.equal(cached.rawPayload.length, 0);
        assert.equal(cached.headers.etag, etag);
      }
      const changed = await app.inject({ method: 'GET', url, headers: { 'if-none-match': '"other"' } });
      assert.equal(changed.statusCode, 200);
    }
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

  type Operation = {
    operationId?: string;
    security?: Record<string, string[]>[];
    responses: Record<
      string,
      {
        headers?: Record<string, { $ref?: string; required?: boolean; schema?: Json; description?: string }>;
        content?: Json;
      }
    >;
  };
  type Json = Record<string, unknown>;
  type Document = {
    servers?: { url: string }[];
    paths: Record<string, Record<string, Operation>>;
    components: {
      headers?: Record<string, { required?: boolean; schema?: Json }>;
      schemas?: Record<string, Json>;
      securitySchemes?: Record<string, unknown>;
    };
  };
  const documentOf = async (of: FastifyInstance = app): Promise<Document> =>
    JSON.parse((await of.inject({ method: 'GET', url: '/openapi.json' })).body);
  const operationsOf = (document: Document) =>
    Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ name: `${method} ${path}`, operation })),
    );

  it('names its server: relative without PUBLIC_URL, PUBLIC_URL when set', async (t) => {
    assert.deepEqual((await documentOf()).servers, [{ url: '/' }]);
    const { app: deployed } = await buildTestApp(t, { env: { PUBLIC_URL: 'https://api.players.test/' } });
    assert.equal((await documentOf(deployed)).servers?.[0]?.url, 'https://api.players.test');
  });

  it('states the security of every operation: none for the public ones, a bearer token for the others, with its grant as scope', async () => {
    const document = await documentOf();
    const security = Object.fromEntries(
      operationsOf(document).map(({ name, operation }) => [name, operation.security]),
    );
    assert.deepEqual(security, {
      'get /openapi.json': [],
      'get /docs': [],
      'get /health': [],
      'get /ready': [],
      'get /metrics': [],
      'post /auth/refresh': [],
      'get /auth/me': [{ bearerAuth: [] }],
      'post /admin/developer/applications': [{ bearerAuth: [] }],
      'get /admin/developer/applications': [{ bearerAuth: [] }],
      'get /admin/developer/applications/{id}': [{ bearerAuth: [] }],
      'post /admin/developer/applications/{id}/approve': [{ bearerAuth: ['applications:review'] }],
      'post /admin/developer/applications/{id}/reject': [{ bearerAuth: ['applications:review'] }],
      'post /admin/developer/applications/{id}/revoke': [{ bearerAuth: ['applications:review'] }],
      'post /admin/developer/applications/{id}/withdraw': [{ bearerAuth: [] }],
      'post /admin/developer/applications/{id}/key': [{ bearerAuth: [] }],
      'post /admin/developer/applications/{id}/key/rotate': [{ bearerAuth: [] }],
      'post /admin/developer/applications/{id}/key/revoke': [{ bearerAuth: [] }],
      'post /auth/token': [],
      'post /messenger/logging/interaction': [{ bearerAuth: ['messenger:log'] }],
      'get /messenger/logging/interaction': [{ bearerAuth: ['messenger:read'] }],
      'get /messenger/user/{snowflake}/profile': [{ bearerAuth: ['messenger:read'] }],
      'put /messenger/user/{snowflake}/profile': [{ bearerAuth: ['messenger:write'] }],
      'post /messenger/user/{snowflake}/accounts': [{ bearerAuth: ['messenger:write'] }],
      'delete /messenger/user/{snowflake}/accounts/{uuid}': [{ bearerAuth: ['messenger:write'] }],
      'put /messenger/user/{snowflake}/accounts/{uuid}/primary': [{ bearerAuth: ['messenger:write'] }],
      'get /player/{player}': [{ bearerAuth: ['player:read'] }],
      'get /player/{player}/history': [{ bearerAuth: ['player:read'] }],
      'get /player/{player}/sessions': [{ bearerAuth: ['player:read'] }],
      'post /players': [{ bearerAuth: ['player:read'] }],
      'get /gamemode/profiles/{player}': [{ bearerAuth: ['profiles:read'] }],
      'post /ping/{player}': [{ bearerAuth: ['ping:write'] }],
      'get /ping/{player}': [{ bearerAuth: ['ping:read'] }],
    });
    assert.deepEqual(Object.keys(document.components.securitySchemes ?? {}), ['bearerAuth']);
  });

  it('with Discord sign-in on, documents the portal session beside the bearer token on the portal’s routes', async (t) => {
    const { app: portal } = await buildTestApp(t, {
      env: {
        DISCORD_CLIENT_ID: '1',
        DISCORD_CLIENT_SECRET: 'a-secret-of-discord',
        DISCORD_REDIRECT_URI: 'https://api.players.test/auth/discord/callback',
      },
    });
    const document = await documentOf(portal);
    const both = [{ bearerAuth: [] }, { sessionCookie: [] }];
    for (const [path, method] of [
      ['/admin/developer/applications', 'post'],
      ['/admin/developer/applications/{id}/key', 'post'],
      ['/auth/me', 'get'],
    ] as const) {
      assert.deepEqual(document.paths[path]?.[method]?.security, both, `${method} ${path}`);
    }
    assert.deepEqual(
      document.paths['/player/{player}']?.get?.security,
      [{ bearerAuth: ['player:read'] }],
      'data routes: a token only',
    );
    assert.deepEqual(document.paths['/auth/logout']?.post?.security, [{ sessionCookie: [] }]);
    assert.deepEqual(document.paths['/auth/discord/login']?.get?.security, []);
    assert.ok(document.components.securitySchemes?.sessionCookie);
    assert.match(JSON.stringify(document.components.securitySchemes?.bearerAuth), /portal/, 'the way in');
  });

  it('documents /metrics behind METRICS_TOKEN when one is set', async (t) => {
    const { app: guarded } = await buildTestApp(t, { env: { METRICS_TOKEN: 'scrape-me-0123456789abcdef' } });
    const document = await documentOf(guarded);
    const metrics = document.paths['/metrics']?.get;
    assert.deepEqual(metrics?.security, [{ metricsToken: [] }]);
    assert.ok(metrics?.responses['401']?.content?.['application/json'], 'its 401 is a JSON ErrorResponse');
    assert.ok(metrics?.responses['200']?.content?.['text/plain']);
    assert.ok(document.components.securitySchemes?.metricsToken);
  });

  it('declares the headers of every answer as header objects, the platform ones by reference', async () => {
    const document = await documentOf();
    for (const name of ['API-Version', 'X-Request-Id'])
      assert.equal(document.components.headers?.[name]?.required, true, name);
    for (const { name, operation } of operationsOf(document)) {
      for (const [status, response] of Object.entries(operation.responses)) {
        assert.equal(
          response.headers?.['API-Version']?.$ref,
          '#/components/headers/API-Version',
          `${name} ${status}`,
        );
        assert.equal(response.headers?.['X-Request-Id']?.$ref, '#/components/headers/X-Request-Id');
        // HTTP allows no body in a 204 or a 304: the document declares none there, and one everywhere else.
        if (status === '204' || status === '304')
          assert.equal(response.content, undefined, `${name} ${status} has no body`);
        else assert.ok(response.content, `${name} ${status} has a body`);
      }
      assert.ok(operation.responses['500'] && operation.responses['503'], `${name}: 500 and 503 declared`);
    }
    const player = document.paths['/player/{player}']?.get?.responses ?? {};
    for (const header of ['X-Cache', 'Age', 'Cache-Control'])
      assert.equal(player['200']?.headers?.[header]?.required, true, header);
    assert.equal(player['200']?.headers?.RateLimit?.required, undefined, 'RateLimit is not always sent');
    assert.equal(player['429']?.headers?.['Retry-After']?.required, true);
    assert.equal(player['401']?.headers?.['WWW-Authenticate']?.required, true);
    const refresh = document.paths['/auth/refresh']?.post?.responses ?? {};
    assert.deepEqual(Object.keys(refresh).sort(), ['200', '400', '401', '413', '415', '429', '500', '503']);
    assert.ok(refresh['200']?.headers?.RateLimit && refresh['200']?.headers?.['RateLimit-Policy']);
    // Every operation that takes a token may answer 429 (its owner's budget), with the RateLimit headers.
    for (const { name, operation } of operationsOf(document)) {
      if (!operation.security?.length) continue;
      assert.ok(operation.responses['429'], `${name} declares 429`);
      assert.equal(operation.responses['429']?.headers?.['Retry-After']?.required, true, name);
      assert.ok(operation.responses['200']?.headers?.RateLimit, `${name} 200 has RateLimit`);
    }
  });

  it('names the Hypixel objects as components: open objects, every field optional, the players by reference', async () => {
    const document = await documentOf();
    const schemas = document.components.schemas ?? {};
    const components = [
      'HypixelPlayer',
      'PlayerStats',
      'BedwarsStats',
      'SkyWarsStats',
      'DuelsStats',
      'MurderMysteryStats',
      'SkyBlockProfile',
      'SkyBlockMember',
    ];
    for (const name of components) {
      const schema = schemas[name];
      assert.equal(schema?.type, 'object', name);
      assert.equal(schema?.additionalProperties, true, `${name}: any other field allowed`);
      assert.equal(schema?.required, undefined, `${name}: every field optional`);
      assert.match(
        String(schema?.description),
        /does not guarantee its types/,
        `${name} says its types are Hypixel's`,
      );
    }
    // Every object inside them is open too, and no field of theirs is required.
    const walk = (node: unknown, at: string): void => {
      if (Array.isArray(node)) {
        node.forEach((item, index) => {
          walk(item, `${at}/${index}`);
        });
        return;
      }
      if (typeof node !== 'object' || node === null) return;
      const schema = node as Json;
      assert.equal(schema.required, undefined, `${at}: nothing required`);
      if (schema.type === 'object')
        assert.notEqual(schema.additionalProperties ?? false, false, `${at}: open`);
      for (const [key, value] of Object.entries(schema)) walk(value, `${at}/${key}`);
    };
    for (const name of components) walk(schemas[name], name);
    const contentOf = (path: string, method: string) =>
      JSON.stringify(document.paths[path]?.[method]?.responses['200']?.content);
    assert.match(
      contentOf('/player/{player}', 'get'),
      /"player":\{"\$ref":"#\/components\/schemas\/HypixelPlayer"\}/,
    );
    assert.match(
      contentOf('/players', 'post'),
      /"player":\{"\$ref":"#\/components\/schemas\/HypixelPlayer"\}/,
    );
    assert.match(
      contentOf('/gamemode/profiles/{player}', 'get'),
      /"items":\{"\$ref":"#\/components\/schemas\/SkyBlockProfile"\}/,
    );
  });

  it('declares the headers the bodies kept as bytes answer with: ETag, Vary, Content-Encoding, and a 304 without body', async () => {
    const document = await documentOf();
    for (const [path, method] of [
      ['/openapi.json', 'get'],
      ['/docs', 'get'],
      ['/ping/{player}', 'get'],
    ] as const) {
      const { 200: ok, 304: notModified } = document.paths[path]?.[method]?.responses ?? {};
      assert.equal(ok?.headers?.ETag?.required, true, path);
      assert.equal(ok?.headers?.Vary?.required, true, path);
      assert.ok(ok?.headers?.['Content-Encoding'], path);
      assert.equal(notModified?.headers?.ETag?.required, true, `${path} 304`);
      assert.equal(notModified?.headers?.Vary?.required, true, `${path} 304`);
      assert.equal(notModified?.headers?.['Content-Encoding'], undefined, `${path} 304: no body to encode`);
    }
    // A route that leaves compression to @fastify/compress may answer anything compressed, errors included.
    for (const status of ['200', '401', '500']) {
      const response = document.paths['/auth/me']?.get?.responses[status];
      assert.ok(response?.headers?.['Content-Encoding'], `/auth/me ${status}`);
      assert.equal(response?.headers?.Vary?.required, undefined, `/auth/me ${status}: Vary when compressed`);
    }
    // A route that says `compress: false` declares what it sends itself: its errors are never compressed.
    assert.equal(
      document.paths['/player/{player}']?.get?.responses['400']?.headers?.['Content-Encoding'],
      undefined,
    );
    assert.equal(
      document.paths['/players']?.post?.responses['200']?.headers?.['Content-Encoding'],
      undefined,
    );
    const refused = document.paths['/players']?.post?.responses['415']?.headers?.['Accept-Encoding'];
    assert.deepEqual(refused?.schema, { type: 'string', enum: ['identity'] }, 'a body in a content coding');
  });

  it('with CORS_ORIGINS set, declares the CORS headers on every answer, and Vary by Origin', async (t) => {
    const { app: cors } = await buildTestApp(t, { env: { CORS_ORIGINS: 'https://site.example' } });
    const document = await documentOf(cors);
    assert.ok(document.components.headers?.['Access-Control-Allow-Origin']);
    assert.ok(document.components.headers?.['Access-Control-Expose-Headers']);
    for (const { name, operation } of operationsOf(document)) {
      for (const [status, response] of Object.entries(operation.responses)) {
        assert.equal(
          response.headers?.['Access-Control-Allow-Origin']?.$ref,
          '#/components/headers/Access-Control-Allow-Origin',
          `${name} ${status}`,
        );
        assert.equal(response.headers?.Vary?.required, true, `${name} ${status}: Vary: Origin always`);
        assert.equal(response.headers?.Vary?.schema?.pattern, '^Origin(, [Aa]ccept-[Ee]ncoding)?$');
      }
    }
    // Off (the default), none of it.
    const plain = await documentOf();
    assert.equal(plain.components.headers?.['Access-Control-Allow-Origin'], undefined);
    assert.equal(plain.paths['/health']?.get?.responses['200']?.headers?.Vary?.required, undefined);
  });

  it('describes the lookups as they answer: profiles without throttle, a 503 in either shape', async () => {
    const document = await documentOf();
    const schemaOf = (path: string, status: string) =>
      document.paths[path]?.get?.responses[status]?.content?.['application/json'] as
        | { schema: { properties?: Json; required?: string[]; anyOf?: unknown[] } }
        | undefined;
    assert.deepEqual(schemaOf('/gamemode/profiles/{player}', '200')?.schema.required, [
      'success',
      'profiles',
    ]);
    assert.equal(schemaOf('/gamemode/profiles/{player}', '200')?.schema.properties?.throttle, undefined);
    assert.deepEqual(schemaOf('/player/{player}', '200')?.schema.required, ['success', 'throttle', 'player']);
    for (const path of ['/player/{player}', '/gamemode/profiles/{player}']) {
      const anyOf = schemaOf(path, '503')?.schema.anyOf;
      assert.equal(anyOf?.length, 2, path);
      assert.deepEqual(anyOf?.[1], { $ref: '#/components/schemas/ErrorResponse' });
    }
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
    // Which grants a developer may ask for, and which only an operator gives.
    for (const grant of DEVELOPER_GRANTS)
      assert.match(reply.body, new RegExp(`<code>${grant}</code></td><td>a developer application may ask`));
    for (const grant of OPERATOR_GRANTS)
      assert.match(reply.body, new RegExp(`<code>${grant}</code></td><td>given only by an operator`));
    assert.match(reply.body, /id="limits"/);
  });

  it('starts the docs page with getting started: a token, the first call in curl and TypeScript, an icon', async () => {
    const { body } = await app.inject({ method: 'GET', url: '/docs' });
    const at = (id: string) => body.indexOf(`id="${id}"`);
    assert.ok(at('getting-started') > 0 && at('getting-started') < at('getting-a-token'));
    assert.ok(at('getting-a-token') < at('first-call') && at('first-call') < at('endpoints'));
    const firstCall = body.slice(at('first-call'), at('endpoints'));
    assert.match(firstCall, /curl -s -X POST &#34;\$PDS_URL\/auth\/token&#34;/);
    assert.match(firstCall, /await fetch\(/);
    assert.match(firstCall, /Authorization: `Bearer \$\{token\}`/);
    assert.match(
      body,
      /<link rel="icon" type="image\/svg\+xml" href="data:image\/svg\+xml,/,
      'no /favicon.ico asked for',
    );
  });

  it('lists every operation of the document on the docs page with its grant and a curl of its example', async () => {
    const { body } = await app.inject({ method: 'GET', url: '/docs' });
    const document = await documentOf();
    const sectionOf = (operationId: string) => {
      const match = new RegExp(`<section class="op" id="op-${operationId}">([\\s\\S]*?)</section>`).exec(
        body,
      );
      assert.ok(match, `${operationId} has its section`);
      return match[1] ?? '';
    };
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        const section = sectionOf(String(operation.operationId));
        assert.ok(
          section.includes(`<code class="method">${method.toUpperCase()}</code>`),
          `${method} ${path}`,
        );
        assert.ok(section.includes(`<code>${path}</code>`), `${method} ${path}`);
        const grant = operation.security?.find((requirement) => requirement.bearerAuth)?.bearerAuth?.[0];
        if (grant) assert.ok(section.includes(`<code class="grant">${grant}</code>`), `${path}: ${grant}`);
        if (operation.security?.length === 0) assert.match(section, /public: no token/, path);
        assert.match(section, /<pre><code>curl /, `${method} ${path}: an example request`);
        const example = (operation as { requestBody?: { content: Record<string, { example?: unknown }> } })
          .requestBody?.content['application/json']?.example;
        if (example !== undefined) {
          const sent = JSON.stringify(example).replace(/'/g, "'\\''");
          const html = sent.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
          assert.ok(section.includes(html), `${method} ${path}: the document's example, as it is`);
        }
      }
    }
    assert.match(
      sectionOf('getPlayer'),
      /curl &#34;\$PDS_URL\/player\/[0-9a-f]{32}&#34; \\\n {2}-H &#34;Authorization: Bearer \$PDS_TOKEN&#34;/,
    );
    // The errors come after the last operation, each with how to fix it.
    assert.ok(body.lastIndexOf('<section class="op"') < body.indexOf('id="errors"'));
    for (const kind of errorCatalogue) {
      assert.ok(kind.fix.length > 10, `${kind.name} says how to fix it`);
      assert.match(body, new RegExp(`id="error-${kind.name}">.*<td class="fix">[^<]`), kind.name);
    }
  });

  it('serves the interactive explorer from the package, offline', async () => {
    const page = await app.inject({ method: 'GET', url: '/docs/ui/' });
    assert.equal(page.statusCode, 200);
    const script = await app.inject({ method: 'GET', url: '/docs/ui/static/swagger-ui-bundle.js' });
    assert.equal(script.statusCode, 200);
    assert.ok(script.body.length > 100_000);
  });
});
