import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { promisify } from 'node:util';
import { GRANTS } from '../../src/platform/auth/grants.js';
import { MAX_SNOWFLAKE } from '../../src/platform/snowflake.js';
import { fitsText, Text } from '../../src/platform/text.js';
import { buildTestApp, suiteScope } from '../helpers/build-test-app.js';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { bearer, issueToken } from '../helpers/tokens.js';

/**
 * The OpenAPI document as client generators and outside validators read it: 64-bit IDs that no generator
 * reads as a signed 64-bit or a float, optional parameters optional, patterns every regex dialect compiles,
 * grants as security scopes, one tag per operation, an example on every request body that the service
 * takes as it is, and Redocly's lint at 0 errors.
 */

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null;

/** Every node of the document under a key, with its JSON pointer. */
function* nodesUnder(node: unknown, key: string, path = ''): Generator<[string, unknown]> {
  if (Array.isArray(node)) {
    for (const [index, inner] of node.entries()) yield* nodesUnder(inner, key, `${path}/${index}`);
  } else if (isObject(node)) {
    for (const [name, inner] of Object.entries(node)) {
      if (name === key) yield [`${path}/${name}`, inner];
      yield* nodesUnder(inner, key, `${path}/${name}`);
    }
  }
}

interface Operation {
  readonly method: string;
  readonly path: string;
  readonly operation: Json;
}

function operationsOf(document: Json): Operation[] {
  return Object.entries(document.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json).map(([method, operation]) => ({
      method,
      path,
      operation: operation as Json,
    })),
  );
}

/** The value, which the test needs to be there. */
function present<T>(value: T | undefined, what: string): T {
  assert.ok(value !== undefined, `${what} is missing`);
  return value;
}

const operationNamed = (document: Json, operationId: string): Operation =>
  present(
    operationsOf(document).find(({ operation }) => operation.operationId === operationId),
    operationId,
  );

describe('the OpenAPI document for client generators', () => {
  const scope = suiteScope();
  let document: Json;
  before(async () => {
    const { app } = await buildTestApp(scope);
    document = JSON.parse((await app.inject({ method: 'GET', url: '/openapi.json' })).body);
  });

  it('declares 64-bit IDs as uint64 or exact decimal text, never int64, and says how to parse them', () => {
    for (const [pointer, format] of nodesUnder(document, 'format')) {
      assert.notEqual(format, 'int64', `${pointer}: int64 is read as a signed 64-bit integer`);
    }
    let answers = 0;
    for (const [pointer, properties] of nodesUnder(document.paths, 'properties')) {
      if (!isObject(properties) || !pointer.includes('/responses/')) continue;
      for (const name of ['owner', 'user_id', 'server_id']) {
        const schema: unknown = properties[name];
        if (!isObject(schema)) continue;
        answers++;
        assert.equal(schema.type, 'integer', `${pointer}/${name}`);
        assert.equal(schema.format, 'uint64', `${pointer}/${name}`);
      }
    }
    assert.ok(answers >= 5, 'the answers with IDs are looked at');
    assert.match(String((document.info as Json).description), /## 64-bit IDs[\s\S]*context\.source/);
  });

  it('declares every ID given as text exactly: 1 to 2^64-1, a {snowflake} of 17 to 20 digits', () => {
    const max = MAX_SNOWFLAKE.toString();
    const above = (MAX_SNOWFLAKE + 1n).toString();
    const texts = [...nodesUnder(document.paths, 'pattern')].filter(
      ([, pattern]) => new RegExp(String(pattern)).test(max) && !new RegExp(String(pattern)).test('a'),
    );
    assert.ok(texts.length >= 5, 'the ID patterns are found');
    for (const [pointer, pattern] of texts) {
      const accepts = new RegExp(String(pattern));
      for (const wrong of [above, '99999999999999999999', '018446744073709551615', '-1', '0'])
        assert.ok(!accepts.test(wrong), `${pointer} takes ${wrong}`);
      for (const right of ['123456789012345678', '18446744073709551614', '9223372036854775808'])
        assert.ok(accepts.test(right), `${pointer} refuses ${right}`);
    }
    const snowflake = operationsOf(document)
      .flatMap(({ operation }) => (operation.parameters as Json[] | undefined) ?? [])
      .filter((parameter) => parameter.name === 'snowflake');
    assert.ok(snowflake.length > 0);
    for (const parameter of snowflake) {
      const accepts = new RegExp(String((parameter.schema as Json).pattern));
      assert.ok(!accepts.test('1234567890123456'), 'under 17 digits');
      assert.ok(accepts.test('12345678901234567'));
    }
  });

  it('has patterns every regular-expression dialect compiles: no property classes, surrogates or look-around', () => {
    const patterns = [...nodesUnder(document, 'pattern')];
    assert.ok(patterns.length > 10);
    for (const [pointer, pattern] of patterns) {
      assert.equal(typeof pattern, 'string', pointer);
      const text = String(pattern);
      assert.doesNotThrow(() => new RegExp(text), `${pointer} compiles without the u flag`);
      assert.ok(!/\\[pP]\{/.test(text), `${pointer}: a Unicode property class`);
      assert.ok(!/\\u\{/.test(text), `${pointer}: a code point escape`);
      assert.ok(!/\\u[dD][89a-fA-F][0-9a-fA-F]{2}/.test(text), `${pointer}: a surrogate`);
      assert.ok(!/\(\?<?[=!]/.test(text), `${pointer}: look-around`);
      assert.ok(!/\\[1-9]|\\k</.test(text), `${pointer}: a back-reference`);
    }
  });

  it("matches as Python's re matches (python-jsonschema's dialect): the same strings taken and refused", () => {
    const patterns = [...new Set([...nodesUnder(document, 'pattern')].map(([, pattern]) => String(pattern)))];
    const probes = [
      ...['', ' ', 'a', 'Z', '0', '-1', 'a b', ' a', 'a ', '\t', '\n', 'a\nb', '_', '.', '~', '/', '\\'],
      ...['1', '12345678901234567', '18446744073709551615', '18446744073709551616', '99999999999999999999'],
      ...['en', 'en-US', 'pt-BR', 'zh-Hant-TW', 'EN', 'e', 'english', 'x'.repeat(129), 'é', 'Ω', '\u00a0'],
      ...['\u200b', '\u3000', '\ufeff', '\ufffd', '💥', '\u{1f600}a', 'Notch', 'N0tch_', 'a'.repeat(17)],
    ];
    const script =
      'import json, re, sys\n' +
      'job = json.load(sys.stdin)\n' +
      'print(json.dumps([[re.search(p, s) is not None for s in job["probes"]] for p in job["patterns"]]))';
    const out = execFileSync('python3', ['-c', script], { input: JSON.stringify({ patterns, probes }) });
    const taken = JSON.parse(out.toString()) as boolean[][];
    for (const [index, pattern] of patterns.entries()) {
      const js = new RegExp(pattern);
      const differ = probes.filter((probe, at) => js.test(probe) !== taken[index]?.[at]);
      assert.deepEqual(differ, [], `${pattern}: Python's re decides these differently`);
    }
  });

  it("keeps the service's exact text rule where the portable pattern cannot say it", () => {
    const name = { minLength: 1, maxLength: 64 };
    const pattern = new RegExp(String((Text({ ...name, description: '' }) as unknown as Json).pattern));
    for (const blank of ['   ', '\u200b', '\u2800\u3164', '\t']) {
      assert.ok(!fitsText(blank, name), JSON.stringify(blank));
      assert.ok(!pattern.test(blank), `the document refuses ${JSON.stringify(blank)} too`);
    }
    for (const visible of ['Guild stats bot', ' a ', 'été', '🙂']) {
      assert.ok(fitsText(visible, name), visible);
      assert.ok(pattern.test(visible), visible);
    }
    // What the portable pattern cannot say: a lone surrogate, blank characters beyond U+FFFF.
    assert.ok(!fitsText('a\ud800', name));
    assert.ok(!fitsText('\u{e0020}', name));
  });

  it('makes optional parameters optional and the interaction options an open object', () => {
    for (const operationId of ['listApplications', 'listInteractionLogs']) {
      const { operation } = operationNamed(document, operationId);
      const limit = present(
        (operation.parameters as Json[]).find((parameter) => parameter.name === 'limit'),
        `${operationId}'s limit`,
      );
      assert.notEqual(limit.required, true, operationId);
    }
    const [, options] = present(
      [...nodesUnder(document.paths, 'options')].find(([pointer]) => pointer.includes('/requestBody/')),
      'the options of a request',
    );
    assert.equal((options as Json).additionalProperties, true);
  });

  it("states locale's form as a pattern that takes every tag the service takes", () => {
    const { operation } = operationNamed(document, 'setMessengerUserLocale');
    const body = present(
      ((operation.requestBody as Json).content as Record<string, Json>)['application/json'],
      'the locale body',
    );
    const locale = ((body.schema as Json).properties as Record<string, Json>).locale as Json;
    const pattern = new RegExp(String(locale.pattern));
    const takes = (tag: string) => {
      try {
        const [canonical] = Intl.getCanonicalLocales(tag);
        // As the service (messenger-users.service.ts): `und` names no language (read as '' by some ICUs).
        const language = canonical && new Intl.Locale(canonical).language;
        return Boolean(language) && language !== 'und';
      } catch {
        return false;
      }
    };
    for (const tag of [
      'en',
      'EN-us',
      'pt-BR',
      'zh-Hant-TW',
      'es-419',
      'de-CH-1996',
      'sl-rozaj-biske',
      'en-u-ca-gregory',
      'en-t-ja-latn',
      'art-lojban',
      'en-x-foo',
      'un',
      'unx',
      'und',
      'und-x-private',
      'x-foo',
      'i-klingon',
      'en_US',
      'en--US',
      'root',
      'toolongalanguage',
      'en-US-u',
    ]) {
      assert.equal(pattern.test(tag), takes(tag), tag);
    }
  });

  it('names the grant of each guarded operation as its security scope, and the scheme lists them', () => {
    const scopes: Record<string, string[]> = Object.fromEntries(
      operationsOf(document).map(({ operation }) => [
        operation.operationId,
        (operation.security as Json[]).flatMap((requirement) => (requirement.bearerAuth as string[]) ?? []),
      ]),
    );
    assert.deepEqual(scopes.getPlayer, ['player:read']);
    assert.deepEqual(scopes.getGamemodeProfiles, ['profiles:read']);
    assert.deepEqual(scopes.logInteraction, ['messenger:log']);
    assert.deepEqual(scopes.ingestPingSamples, ['ping:write']);
    assert.deepEqual(scopes.approveApplication, ['applications:review']);
    assert.deepEqual(scopes.createApplication, []);
    for (const list of Object.values(scopes))
      for (const scope of list) assert.ok(GRANTS.includes(scope as never));
    const bearerAuth = present(
      (document.components as { securitySchemes: Record<string, Json> }).securitySchemes.bearerAuth,
      'bearerAuth',
    );
    for (const grant of GRANTS) assert.ok(String(bearerAuth.description).includes(`\`${grant}\``), grant);
  });

  it('gives every operation one tag, declared at the top', () => {
    const declared = new Set((document.tags as Json[]).map((tag) => tag.name));
    for (const { method, path, operation } of operationsOf(document)) {
      const tags = operation.tags as string[];
      assert.equal(tags.length, 1, `${method} ${path}`);
      assert.ok(declared.has(tags[0]), `${method} ${path}: ${tags[0]}`);
    }
  });

  it('passes Redocly lint with the repository configuration at 0 errors', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pds-openapi-'));
    try {
      const file = join(dir, 'openapi.json');
      await writeFile(file, JSON.stringify(document));
      const cli = join(process.cwd(), 'node_modules', '@redocly', 'cli', 'bin', 'cli.js');
      const config = join(process.cwd(), 'redocly.yaml');
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [cli, 'lint', file, '--config', config, '--format', 'json'],
        {
          env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
          maxBuffer: 16 * 1024 * 1024,
          timeout: 120_000,
        },
      ).catch((error: { stdout?: string; message: string }) => {
        // Exit code 1: problems found; the report says which.
        if (error.stdout) return { stdout: error.stdout };
        throw error;
      });
      const report = JSON.parse(stdout) as {
        totals: { errors: number; warnings: number };
        problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
      };
      const errors = report.problems
        .filter((problem) => problem.severity === 'error')
        .map((problem) => `${problem.ruleId} ${problem.location[0]?.pointer}: ${problem.message}`);
      assert.deepEqual(errors, []);
      assert.equal(report.totals.errors, 0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the request bodies’ examples, sent as they are', () => {
  let fake: FakeUpstream;
  before(async () => {
    fake = await startFakeUpstream();
  });
  after(() => fake.close());

  it('each gets a 2xx from the service (secrets replaced by real ones)', async (t: TestContext) => {
    const { app, config } = await buildTestApp(t, { upstream: fake });
    const owner = 123456789012345678n;
    const token = await issueToken(app, config, { owner, grants: GRANTS });
    const identity = await issueToken(app, config, { owner, grants: [] });
    // A reviewer may not review their own application: another owner's token approves and rejects.
    const reviewer = await issueToken(app, config, { owner: owner + 1n, grants: GRANTS });
    const document = JSON.parse((await app.inject({ method: 'GET', url: '/openapi.json' })).body) as Json;
    const withBodies = operationsOf(document).filter(({ operation }) => operation.requestBody);

    const exampleOf = (operationId: string): Json => {
      const found = withBodies.find(({ operation }) => operation.operationId === operationId);
      assert.ok(found, operationId);
      const media = present(
        ((found.operation.requestBody as Json).content as Record<string, Json>)['application/json'],
        `${operationId}'s JSON body`,
      );
      assert.ok(isObject(media.example), `${operationId} has an example`);
      return structuredClone(media.example);
    };
    const urlOf = (
      operationId: string,
      params: Record<string, string> = {},
    ): { method: string; url: string } => {
      const { method, path, operation } = operationNamed(document, operationId);
      const parameters = (operation.parameters as Json[] | undefined) ?? [];
      const url = path.replace(/\{([^}]+)\}/g, (_, name: string) => {
        const declared = parameters.find((parameter) => parameter.name === name)?.schema as Json | undefined;
        const value = params[name] ?? declared?.example;
        assert.ok(value !== undefined, `${operationId}: a value for {${name}}`);
        return encodeURIComponent(String(value));
      });
      return { method: method.toUpperCase(), url };
    };
    const sent = new Set<string>();
    const send = async (
      operationId: string,
      options: { params?: Record<string, string>; replace?: Json; auth?: string } = {},
    ) => {
      sent.add(operationId);
      const { method, url } = urlOf(operationId, options.params);
      const reply = await app.inject({
        method: method as 'POST',
        url,
        headers: options.auth === '' ? {} : bearer(options.auth ?? token),
        payload: { ...exampleOf(operationId), ...options.replace },
      });
      assert.ok(
        reply.statusCode >= 200 && reply.statusCode < 300,
        `${operationId}: ${reply.statusCode} ${reply.body}`,
      );
      return JSON.parse(reply.body) as Json;
    };

    const approved = await send('createApplication');
    await send('approveApplication', { params: { id: String(approved.id) }, auth: reviewer });
    const collected = await app.inject({
      method: 'POST',
      url: `/admin/developer/applications/${approved.id}/key`,
      headers: bearer(identity),
    });
    assert.equal(collected.statusCode, 200, collected.body);
    await send('exchangeKey', { replace: { key: JSON.parse(collected.body).key }, auth: '' });
    await send('revokeApplication', { params: { id: String(approved.id) }, auth: reviewer });
    const rejected = await send('createApplication');
    await send('rejectApplication', { params: { id: String(rejected.id) }, auth: reviewer });
    const withdrawn = await send('createApplication');
    await send('withdrawApplication', { params: { id: String(withdrawn.id) } });
    await send('refreshToken', { replace: { token: await issueToken(app, config, { owner }) }, auth: '' });
    await send('logInteraction');
    await send('setMessengerUserLocale');
    await send('linkMinecraftAccount');
    await send('ingestPingSamples');
    await send('getPlayers');

    assert.deepEqual(
      [...sent].sort(),
      withBodies.map(({ operation }) => String(operation.operationId)).sort(),
      'every operation with a body is sent its example',
    );
  });
});
