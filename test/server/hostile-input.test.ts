// Hostile input against every operation of the OpenAPI document the service serves: generated requests
// (fast-check) with wrong types, missing and extra fields, huge strings, deep nesting, unicode, numbers
// beyond 2^64, negative and fractional IDs, traversal and SQL-looking path parameters, wrong methods and
// content types, truncated JSON, and tokens that are expired, forged, `alg: none` or for another audience.
// Every answer must be a status the document declares for the operation, never a 5xx, with an ErrorResponse
// for an error, within a few seconds, and never quoting the caller's token.
//
// Seeded: a failure prints its seed and path; replay it with HOSTILE_SEED=<seed> (and the path fast-check
// prints in `HOSTILE_PATH`). HOSTILE_RUNS raises the number of requests per operation for a longer soak
// (default 40), and HOSTILE_SEED=random draws a new seed.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import fc from 'fast-check';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { describeEachBackend } from '../helpers/backends.js';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js';
import { startFakeDiscord } from '../helpers/fake-discord.js';
import { startFakeUpstream } from '../helpers/fake-upstream.js';
import {
  bodyFor,
  type Operation,
  operationsOf,
  parameterText,
  pathSegment,
  payloadOf,
  plausible,
  textOf,
  urlOf,
} from '../helpers/hostile-requests.js';
import { hostileCredentials } from '../helpers/hostile-tokens.js';
import type { Reply } from '../helpers/replies.js';
import { bearer, issueToken } from '../helpers/tokens.js';

const RUNS = Number(process.env.HOSTILE_RUNS ?? 40);
const SEED =
  process.env.HOSTILE_SEED === 'random'
    ? Math.floor(Math.random() * 2 ** 31)
    : Number(process.env.HOSTILE_SEED ?? 20_261_123);
const PATH = process.env.HOSTILE_PATH;
/** An answer slower than this is a hang (the slowest honest one, an upstream call, takes milliseconds here). */
const ANSWER_WITHIN_MS = 10_000;
const OWNER = 123456789012345678n;
const APPLY = '/admin/developer/applications';
/** The hostile credentials that are right in every way but the owner they name (hostile-tokens.ts). */
const OWNERLESS = ['no owner', 'owner 0', 'an owner beyond 64 bits'];

function runSettings(): fc.Parameters<unknown> {
  return { seed: SEED, numRuns: RUNS, ...(PATH ? { path: PATH } : {}), includeErrorInReport: true };
}

async function documentOf(app: FastifyInstance): Promise<Record<string, unknown>> {
  const reply = await app.inject({ method: 'GET', url: '/openapi.json' });
  assert.equal(reply.statusCode, 200);
  return JSON.parse(reply.body) as Record<string, unknown>;
}

/** The answer, or a failure naming the request when none comes within ANSWER_WITHIN_MS. */
async function answerOf(app: FastifyInstance, request: InjectOptions): Promise<Reply> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no answer within ${ANSWER_WITHIN_MS} ms: ${request.method} ${request.url}`)),
      ANSWER_WITHIN_MS,
    );
  });
  try {
    return await Promise.race([app.inject(request), hang]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * What every answer to a hostile request must be: not a 5xx; a status and body the document declares for
 * the operation (the conformance check of the test app); an ErrorResponse for an error; no token quoted.
 */
function assertHandled(test: TestApp, token: string, request: InjectOptions, reply: Reply): void {
  const named = `${request.method} ${String(request.url).slice(0, 200)} (${String(request.headers?.['content-type'] ?? 'no content type')})`;
  assert.ok(reply.statusCode < 500, `${named} answered ${reply.statusCode}: ${reply.body.slice(0, 500)}`);
  const mismatches = test.conformance.take();
  assert.deepEqual(mismatches, [], `${named}: the answer differs from the document`);
  assert.ok(!reply.body.includes(token), `${named}: the answer quotes the bearer token`);
  if (reply.statusCode >= 400) {
    // An ErrorResponse, or the result shape where the player routes answer in it (the document says which,
    // and the conformance check above holds the body to it).
    const body = JSON.parse(reply.body) as { success?: unknown; code?: unknown; extra?: unknown };
    assert.equal(body.success, false, named);
    if (body.code !== undefined || body.extra !== undefined) {
      assert.equal(body.code, reply.statusCode, named);
      assert.ok(Array.isArray(body.extra) && body.extra.length > 0, named);
    }
  }
}

/** A request for `operation` with each of its parts plausible or hostile. */
function hostileRequest(
  operation: Operation,
  token: string,
  known: ReadonlyMap<string, readonly string[]>,
): fc.Arbitrary<InjectOptions> {
  const segments = fc.record(
    Object.fromEntries(
      operation.pathParams.map((parameter) => {
        const existing = known.get(parameter.name) ?? [];
        const segment = pathSegment(parameter.schema);
        return [
          parameter.name,
          existing.length > 0 ? fc.oneof(fc.constantFrom(...existing), segment) : segment,
        ];
      }),
    ),
  );
  // Half the time every parameter is plausible, so that the request reaches the rules behind the checks.
  const queryParams = operation.queryParams.map((parameter) =>
    fc.option(
      fc
        .oneof(plausible(parameter.schema).map(textOf), parameterText(parameter.schema))
        .map((value) => [parameter.name, value] as const),
      { freq: 2 },
    ),
  );
  const query = fc
    .tuple(
      fc.tuple(...queryParams),
      // Now and then a parameter repeated or one the operation does not take.
      fc.array(
        fc.tuple(
          fc.constantFrom(
            ...operation.queryParams.map((parameter) => parameter.name),
            'unknown',
            '__proto__',
          ),
          fc.string({ maxLength: 30 }),
        ),
        { maxLength: 2 },
      ),
    )
    .map(([given, more]) => [...given.filter((entry) => entry !== null), ...more]);
  const body = operation.body
    ? fc.option(bodyFor(operation.body), { freq: 10, nil: undefined })
    : fc.constant(undefined);
  return fc.tuple(segments, query, body).map(([pathValues, queryValues, form]) => {
    const { payload, contentType } = form ? payloadOf(form) : {};
    return {
      method: operation.method as InjectOptions['method'],
      url: urlOf(operation, pathValues as Record<string, string>, queryValues),
      headers: { ...bearer(token), ...(contentType ? { 'content-type': contentType } : {}) },
      ...(payload !== undefined ? { payload } : {}),
    };
  });
}

/** The IDs of the developer applications there are (the first page). */
async function applicationIds(test: TestApp, token: string): Promise<string[]> {
  const reply = await test.app.inject({
    method: 'GET',
    url: '/admin/developer/applications?limit=100',
    headers: bearer(token),
  });
  assert.equal(reply.statusCode, 200, reply.body);
  return (JSON.parse(reply.body) as { data: { id: string }[] }).data.map((application) => application.id);
}

describeEachBackend('hostile input, on every operation of the document', (backend) => {
  async function setup(t: Parameters<typeof buildTestApp>[0]) {
    const upstream = await startFakeUpstream();
    t.after(() => upstream.close());
    // Sign-in on, so that the portal's routes are in the document, and attacked, too.
    const discord = await startFakeDiscord(t);
    const test = await buildTestApp(t, { backend, upstream, env: discord.env('http://service.test') });
    const token = await issueToken(test.app, test.config, { owner: OWNER });
    const operations = operationsOf(await documentOf(test.app));
    assert.ok(operations.length >= 20, `the document lists ${operations.length} operations`);
    return { test, token, operations };
  }

  it('answers generated requests with a documented status, never a 5xx, an ErrorResponse for errors', async (t) => {
    const { test, token, operations } = await setup(t);
    // Path parameters naming what exists (applications made by the requests before), so that requests
    // reach the rules about an existing resource too, not only its 404.
    const known = new Map<string, readonly string[]>();
    for (const operation of operations) {
      known.set('id', await applicationIds(test, token));
      await fc.assert(
        fc.asyncProperty(hostileRequest(operation, token, known), async (request) => {
          assertHandled(test, token, request, await answerOf(test.app, request));
        }),
        runSettings(),
      );
    }
  });

  it('refuses every secured operation, with 401 and an ErrorResponse, to a token it did not issue as it is', async (t) => {
    const { test, token, operations } = await setup(t);
    const credentials = await hostileCredentials(test.config, OWNER);
    for (const operation of operations.filter((candidate) => candidate.secured)) {
      for (const { name, authorization } of credentials) {
        const request: InjectOptions = {
          method: operation.method as InjectOptions['method'],
          url: urlOf(operation, Object.fromEntries(operation.pathParams.map((p) => [p.name, '1'])), []),
          headers: authorization === undefined ? {} : { authorization },
        };
        const reply = await answerOf(test.app, request);
        // Applying for access names its applicant by the token's owner: a token naming none is a 400 there.
        const applying = operation.method === 'POST' && operation.path === APPLY;
        const expected = applying && OWNERLESS.includes(name) ? 400 : 401;
        assert.equal(
          reply.statusCode,
          expected,
          `${operation.method} ${operation.path} with ${name}: ${reply.body}`,
        );
        assertHandled(test, token, request, reply);
      }
    }
  });

  it('refuses the same tokens at POST /auth/refresh with a 401 (or a 400 for what is not a token)', async (t) => {
    const { test, token } = await setup(t);
    for (const { name, authorization } of await hostileCredentials(test.config, OWNER)) {
      const presented = authorization?.replace(/^\S+ ?/, '') ?? '';
      const request: InjectOptions = {
        method: 'POST',
        url: '/auth/refresh',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ token: presented }),
      };
      const reply = await answerOf(test.app, request);
      assert.ok([400, 401].includes(reply.statusCode), `${name}: ${reply.statusCode} ${reply.body}`);
      assertHandled(test, token, request, reply);
      assert.ok(
        presented.length < 8 || !reply.body.includes(presented),
        `${name}: the answer quotes the token`,
      );
    }
  });

  it('answers a method a path does not take with 404 or 405 and an ErrorResponse', async (t) => {
    const { test, token, operations } = await setup(t);
    const paths = new Map<string, Set<string>>();
    for (const operation of operations) {
      paths.set(operation.path, (paths.get(operation.path) ?? new Set()).add(operation.method));
    }
    for (const [path, methods] of paths) {
      const url = path.replace(/\{[^}]+\}/g, '1');
      for (const method of ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'] as const) {
        if (methods.has(method)) continue;
        const reply = await answerOf(test.app, {
          method,
          url,
          headers: { ...bearer(token), 'content-type': 'application/json' },
          payload: method === 'GET' ? undefined : '{}',
        });
        assert.ok(
          [404, 405].includes(reply.statusCode),
          `${method} ${path}: ${reply.statusCode} ${reply.body}`,
        );
        const body = JSON.parse(reply.body) as { success?: unknown; code?: unknown };
        assert.equal(body.success, false);
        assert.equal(body.code, reply.statusCode);
      }
    }
  });
});
