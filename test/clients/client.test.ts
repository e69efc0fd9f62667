import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { promisify } from 'node:util';
import { transform } from 'esbuild';
import ts from 'typescript';
import { ApiError, type ClientOptions, createClient } from '../../clients/typescript/src/index.js';
import type { Grant } from '../../src/platform/auth/grants.js';
import { buildTestApp } from '../helpers/build-test-app.js';
import { type FakeUpstream, FIXTURE_PLAYERS, startFakeUpstream } from '../helpers/fake-upstream.js';
import { bearer, issueToken, testTokens } from '../helpers/tokens.js';

/**
 * The TypeScript client (clients/typescript) against the service listening on 127.0.0.1, with the fake
 * upstream: the key exchanged for a token once, tokens refreshed before and after they expire, exact 64-bit
 * IDs, 429s waited out as `Retry-After` says, and failures thrown as typed errors.
 */

/** The README's ten-line bot, as it is written there. */
async function readmeBot(): Promise<string> {
  const readme = await readFile('README.md', 'utf8');
  const section = readme.slice(readme.indexOf('## TypeScript client'));
  const bot = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(bot, 'the README has the bot');
  return bot;
}

/** A Discord ID beyond 2^53: JSON.parse would read it as 987654321098765400. */
const DEVELOPER = 987654321098765432n;
const REVIEWER = 123456789012345678n;
const DEVELOPER_GRANTS: Grant[] = [
  'player:read',
  'profiles:read',
  'ping:read',
  'messenger:log',
  'messenger:read',
];

interface Sent {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly at: number;
  readonly retryAfter: string | null;
}

/** The global fetch, with a record of each call it made (method, path, status, when): nothing is faked. */
function recordingFetch(): { fetch: typeof fetch; sent: Sent[]; to: (path: string) => Sent[] } {
  const sent: Sent[] = [];
  const recording: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    sent.push({
      method: init?.method ?? 'GET',
      path: new URL(String(input)).pathname,
      status: response.status,
      at: Date.now(),
      retryAfter: response.headers.get('retry-after'),
    });
    return response;
  };
  return { fetch: recording, sent, to: (path) => sent.filter((call) => call.path === path) };
}

describe('the TypeScript client', () => {
  let fake: FakeUpstream;
  before(async () => {
    fake = await startFakeUpstream();
  });
  after(() => fake.close());

  /** The service listening on 127.0.0.1, and an approved application's key of DEVELOPER's. */
  async function setup(t: TestContext, env: Record<string, string> = {}) {
    fake.reset();
    const test = await buildTestApp(t, { upstream: fake, env });
    const identity = await issueToken(test.app, test.config, { owner: DEVELOPER, grants: [] });
    const reviewer = await issueToken(test.app, test.config, {
      owner: REVIEWER,
      grants: ['applications:review'],
    });
    const call = async (url: string, token: string, payload?: object) => {
      const reply = await test.app.inject({ method: 'POST', url, headers: bearer(token), payload });
      assert.equal(reply.statusCode, 200, reply.body);
      return reply.json();
    };
    const { id } = await call('/admin/developer/applications', identity, {
      name: 'Stats bot',
      grants: DEVELOPER_GRANTS,
    });
    await call(`/admin/developer/applications/${id}/approve`, reviewer);
    const { key } = await call(`/admin/developer/applications/${id}/key`, identity);
    await test.app.listen({ host: '127.0.0.1', port: 0 });
    const baseUrl = `http://127.0.0.1:${(test.app.server.address() as AddressInfo).port}`;
    const recording = recordingFetch();
    const client = (options: Partial<ClientOptions> = {}) =>
      createClient({ baseUrl, key: key as string, fetch: recording.fetch, ...options });
    return { ...test, key: key as string, baseUrl, client, ...recording };
  }

  it('exchanges the key for a token once, shared by concurrent calls, and reads players and profiles', async (t) => {
    const { client, to } = await setup(t);
    const pds = client();
    const [found, me, again] = await Promise.all([
      pds.player('Minikloon'),
      pds.me(),
      pds.player(FIXTURE_PLAYERS.minikloon.uuid),
    ]);
    assert.equal(to('/auth/token').length, 1, 'one exchange for three concurrent calls');
    assert.equal(found.success, true);
    assert.equal(found.player.displayname, 'Minikloon');
    assert.equal(found.player.uuid, FIXTURE_PLAYERS.minikloon.uuid);
    assert.equal(found.player.networkExp, 160452580);
    assert.equal(typeof found.player.stats?.Bedwars?.Experience, 'number');
    assert.deepEqual(again.player, found.player);
    assert.equal(me.owner, '987654321098765432', 'the owner, exact, as a string');
    assert.deepEqual([...me.grants].sort(), [...DEVELOPER_GRANTS].sort());
    assert.ok(pds.rateLimit.get('work'), 'the RateLimit header is read');

    const { profiles } = await pds.profiles(FIXTURE_PLAYERS.skyblocker.uuid);
    assert.ok(profiles.length > 0);
    assert.equal(typeof profiles[0]?.profile_id, 'string');
    const bulk = await pds.players(['Minikloon', FIXTURE_PLAYERS.builder.uuid]);
    assert.deepEqual(Object.keys(bulk.results), ['Minikloon', FIXTURE_PLAYERS.builder.uuid]);
    assert.equal(to('/auth/token').length, 1, 'the token is kept');
  });

  it('keeps 64-bit snowflakes exact both ways (sent as decimal strings, read as strings)', async (t) => {
    const { client } = await setup(t);
    const pds = client();
    const user = '987654321098765432';
    const server = '18446744073709551615';
    const logged = await pds.logInteraction({
      interaction: {
        interaction_name: 'stats',
        interaction_token: 'aW50ZXJhY3Rpb246OTg3NjU0MzIxMDk4NzY1NDMy',
        interaction_type: 'APPLICATION_COMMAND',
        options: { player: 'Minikloon' },
        server_id: server,
        user_id: user,
      },
      server: { server_id: server, server_name: 'Bed Wars Club' },
      user: { user_id: user, username: 'minikloon_fan' },
    });
    assert.equal(logged.interaction.user_id, user, 'echoed exactly');
    const { data } = await pds.interactionLogs({ user_id: user });
    assert.equal(data.length, 1);
    assert.equal(data[0]?.owner, '987654321098765432');
    assert.equal(data[0]?.interaction.user_id, user);
    assert.equal(data[0]?.interaction.server_id, server);
    assert.equal(
      (await pds.interactionLogs({ user_id: '987654321098765433' })).data.length,
      0,
      'one digit apart',
    );
  });

  it('refreshes the token before it expires, once for concurrent calls', async (t) => {
    const { client, to } = await setup(t);
    let ahead = 0;
    const pds = client({ now: () => Date.now() + ahead });
    await pds.me();
    const first = await pds.token();
    ahead = 3600_000 - 30_000; // the token (an hour) has 30 s left: within the margin
    await Promise.all([pds.me(), pds.player('Minikloon'), pds.me()]);
    assert.equal(to('/auth/refresh').length, 1, 'one refresh for three calls');
    assert.equal(to('/auth/token').length, 1);
    assert.notEqual(await pds.token(), first);
    assert.ok(to('/auth/me').every((call) => call.status === 200));
  });

  it('refreshes an expired token once on 401 TOKEN_EXPIRED, and retries the calls', async (t) => {
    const { app, config, baseUrl, fetch, to } = await setup(t);
    // A token of the developer's issued two hours ago: it expired an hour ago (the refresh takes it for 7 days).
    const past = testTokens(app, config, () => Date.now() - 2 * 3600_000);
    const { token: expired } = await past.issue(DEVELOPER, ['player:read']);
    const pds = createClient({ baseUrl, token: expired, fetch }); // no expiry given: it finds out
    const answers = await Promise.all([pds.me(), pds.player('Minikloon'), pds.me()]);
    assert.equal(answers[0].owner, '987654321098765432');
    assert.equal(to('/auth/refresh').length, 1, 'one refresh for three calls');
    assert.equal(to('/auth/me').filter((call) => call.status === 401).length, 2);
    assert.notEqual(await pds.token(), expired);

    // Without a key, a token that cannot be refreshed is an error to the caller.
    const revoked = createClient({ baseUrl, token: 'not-a-token', fetch });
    await assert.rejects(revoked.me(), (error: unknown) => {
      assert.ok(error instanceof ApiError);
      assert.equal(error.status, 401);
      return true;
    });
  });

  it('reads history, sessions and ping history, and ingests ping samples with an operator token', async (t) => {
    const { app, config, client, baseUrl, fetch } = await setup(t);
    const pds = client();
    await pds.player('Minikloon'); // the first lookup stores the first snapshot
    const history = await pds.history('Minikloon', { fields: ['/networkExp', '/karma'], limit: 10 });
    assert.equal(history.uuid, FIXTURE_PLAYERS.minikloon.uuid);
    assert.equal(history.points.length, 1);
    assert.deepEqual(history.points[0]?.values, { '/networkExp': 160452580, '/karma': 11750550 });
    const { sessions } = await pds.sessions('Minikloon', { limit: 5 });
    assert.ok(Array.isArray(sessions));

    const collector = createClient({
      baseUrl,
      token: await issueToken(app, config, { owner: REVIEWER, grants: ['ping:write'] }),
      fetch,
    });
    const at = new Date(Date.now() - 60_000).toISOString();
    const stored = await collector.ingestPing('Minikloon', {
      samples: [{ ping: 42, lobby: 'bedwars_lobby_3', at }],
    });
    assert.deepEqual({ stored: stored.stored, duplicates: stored.duplicates }, { stored: 1, duplicates: 0 });
    const { data } = await pds.pingHistory('Minikloon', { limit: 1 });
    assert.equal(data[0]?.last_lobby, 'bedwars_lobby_3');
    assert.deepEqual(data[0]?.history, [42]);
  });

  it("waits out a 429's Retry-After (bounded), and paces itself by the RateLimit header", async (t) => {
    // A budget of 30 units refilling one a second; setting up the key spends some of it.
    const { client, sent } = await setup(t, {
      WORK_BUDGET_UNITS: '30',
      WORK_BUDGET_WINDOW_SECONDS: '30',
      WORK_BUDGET_REFUSAL_DELAY_MS: '0',
    });
    const eager = client({ respectRateLimit: false });
    const meCalls = () => sent.filter((call) => call.path === '/auth/me');
    for (let call = 0; call < 40 && !meCalls().some((sent) => sent.status === 429); call++) {
      assert.equal((await eager.me()).owner, '987654321098765432');
    }
    const statuses = meCalls().map((call) => call.status);
    const refusedAt = statuses.indexOf(429);
    assert.ok(refusedAt > 0, `a 429 once the budget is spent: ${statuses}`);
    assert.deepEqual(statuses.slice(refusedAt), [429, 200], 'retried once, successfully');
    const refused = meCalls()[refusedAt];
    const retried = meCalls()[refusedAt + 1];
    const waited = Number(refused?.retryAfter);
    assert.ok(waited >= 1, `Retry-After: ${refused?.retryAfter}`);
    assert.ok(
      (retried?.at ?? 0) - (refused?.at ?? 0) >= waited * 1000 - 50,
      'the retry waited what Retry-After said',
    );

    // Bounded: no retries left, the 429 is the caller's, typed.
    const impatient = client({ maxRetries: 0, respectRateLimit: false });
    await assert.rejects(
      (async () => {
        for (let call = 0; call < 10; call++) await impatient.me();
      })(),
      (error: unknown) => {
        assert.ok(error instanceof ApiError);
        assert.equal(error.status, 429);
        assert.ok(error.is('WORK_BUDGET_EXHAUSTED'), error.message);
        assert.ok((error.retryAfterSeconds ?? 0) >= 1);
        return true;
      },
    );

    // Paced: once an answer said the budget is spent, the next calls wait for a unit instead of a 429.
    const paced = client({ maxRetries: 0 });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const from = sent.length;
    for (let call = 0; call < 4; call++) await paced.me();
    assert.deepEqual(
      sent
        .slice(from)
        .filter((call) => call.path === '/auth/me')
        .map((call) => call.status),
      [200, 200, 200, 200],
      'no 429',
    );
    assert.equal(paced.rateLimit.get('work')?.remaining, 0);
  });

  it('throws failures as a typed ApiError: the ErrorResponse, or the lookup failure', async (t) => {
    const { client, baseUrl } = await setup(t);
    const pds = client();
    await assert.rejects(pds.player('not a name!'), (error: unknown) => {
      assert.ok(error instanceof ApiError);
      assert.equal(error.status, 400);
      assert.equal(error.error?.code, 400);
      assert.ok(error.names.length > 0);
      assert.match(error.error?.documentation ?? '', /#error-/);
      assert.ok(error.requestId);
      return true;
    });
    await assert.rejects(pds.player('00000000000000000000000000000001'), (error: unknown) => {
      assert.ok(error instanceof ApiError);
      assert.equal(error.status, 404);
      assert.equal(error.error, undefined);
      assert.equal(error.lookup?.success, false);
      assert.equal(error.lookup?.throttle, false);
      return true;
    });
    const wrongKey = createClient({ baseUrl, key: `pds_${'A'.repeat(43)}` });
    await assert.rejects(wrongKey.me(), (error: unknown) => {
      assert.ok(error instanceof ApiError);
      assert.equal(error.status, 401);
      assert.ok(error.is('KEY_INVALID'), error.message);
      return true;
    });
  });

  it("runs the README's ten-line bot as it is written, against the client built and installed as a package", async (t) => {
    const { baseUrl, key } = await setup(t);
    const bot = await readmeBot();
    assert.ok(bot.split('\n').filter((line) => line.trim() !== '').length <= 10, 'ten lines');
    // The package as a user gets it: built by its own tsconfig (as `npx tsc -p .` in its folder) with its
    // package.json beside, under node_modules/@player-data-service/client, so the bot's import is resolved
    // through the package's `exports` (lossless-json from the repository's node_modules, further up).
    const dir = await mkdtemp(join('.test-build', 'readme-bot-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const installed = join(dir, 'node_modules', '@player-data-service', 'client');
    await promisify(execFile)(process.execPath, [
      'node_modules/typescript/bin/tsc',
      '-p',
      'clients/typescript/tsconfig.json',
      '--outDir',
      join(installed, 'dist'),
    ]);
    await copyFile('clients/typescript/package.json', join(installed, 'package.json'));
    const { code } = await transform(bot.replace("'https://pds.example.com'", JSON.stringify(baseUrl)), {
      loader: 'ts',
      format: 'esm',
    });
    const file = join(dir, 'bot.mjs');
    await writeFile(file, code);
    const { stdout } = await promisify(execFile)(process.execPath, [file], {
      env: { ...process.env, PDS_KEY: key },
      timeout: 30_000,
    });
    assert.deepEqual(stdout.trim().split('\n'), [
      'Minikloon 0 Bed Wars wins',
      'builder_247 148 Bed Wars wins',
    ]);
  });

  it("runs the /docs page's first call in TypeScript as it is written: a player, and a lookup the upstream failed read as a failure", async (t) => {
    /** The page's TypeScript block, as a reader copies it, made JavaScript, and run with the key. */
    const run = async (baseUrl: string, key: string) => {
      const page = await (await fetch(`${baseUrl}/docs`)).text();
      const block = /<h3 id="first-call-typescript">[\s\S]*?<pre><code>([\s\S]*?)<\/code><\/pre>/.exec(
        page,
      )?.[1];
      assert.ok(block, 'the page has the TypeScript first call');
      const source = block.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));
      const { code } = await transform(source, { loader: 'ts', format: 'esm' });
      const dir = await mkdtemp(join('.test-build', 'docs-first-call-'));
      t.after(() => rm(dir, { recursive: true, force: true }));
      const file = join(dir, 'first-call.mjs');
      await writeFile(file, code);
      return promisify(execFile)(process.execPath, [file], {
        env: { ...process.env, PDS_URL: baseUrl, PDS_KEY: key },
        timeout: 30_000,
      }).then(
        ({ stdout }) => ({ exit: 0, stdout, stderr: '' }),
        (error: { code: number; stdout: string; stderr: string }) => ({ exit: error.code, ...error }),
      );
    };
    const found = await setup(t);
    const served = await run(found.baseUrl, found.key);
    assert.equal(served.exit, 0, served.stderr);
    assert.match(served.stdout, /displayname/, 'the player, printed');

    // A fresh service (nothing cached) whose upstream fails: the lookup's own failure shape, no `extra`.
    const failing = await setup(t);
    fake.misbehave({ failWith: 503 });
    const failed = await run(failing.baseUrl, failing.key);
    fake.reset();
    assert.notEqual(failed.exit, 0);
    assert.match(failed.stderr, /Error: 502: hypixel/, 'the status and the cause');
    assert.doesNotMatch(failed.stderr, /TypeError/);
  });

  it("type-checks the README's bot against the client's types, as a user's strict project would", async (t) => {
    const dir = await mkdtemp(join('.test-build', 'readme-bot-types-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, 'bot.mts');
    await writeFile(file, await readmeBot());
    const program = ts.createProgram([file], {
      strict: true,
      noEmit: true,
      noUncheckedIndexedAccess: true,
      target: ts.ScriptTarget.ES2023,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
      types: ['node'],
      skipLibCheck: true,
      // The package's name, as the bot imports it, is the client's source.
      paths: { '@player-data-service/client': [join(process.cwd(), 'clients/typescript/src/index.ts')] },
    });
    const problems = ts
      .getPreEmitDiagnostics(program)
      .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    assert.deepEqual(problems, []);
  });
});
