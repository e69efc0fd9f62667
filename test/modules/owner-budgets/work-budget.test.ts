import assert from 'node:assert/strict';
import { request } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { it, type TestContext } from 'node:test';
import { sql } from 'kysely';
import { type Backend, describeEachBackend } from '../../helpers/backends.js';
import { buildTestApp } from '../../helpers/build-test-app.js';
import { cli } from '../../helpers/cli.js';
import { FAKE_API_KEY, startFakeUpstream } from '../../helpers/fake-upstream.js';
import { eventually } from '../../helpers/poll.js';
import { json, problemName, type Reply, rateLimitItem } from '../../helpers/replies.js';
import { bearer, issueToken } from '../../helpers/tokens.js';
import { logText } from '../interactions/interaction-logs.js';

const A = 18446744073709551615n; // 2^64-1: owners are exact however large
const B = 123456789012345678n;
const UNITS = 20;
/** A window long enough that nothing refills noticeably during a test. */
const WINDOW_SECONDS = 3600;

const work = (reply: Reply) => rateLimitItem(reply.headers.ratelimit, 'work');

async function setup(t: TestContext, backend: Backend, env: Record<string, string> = {}) {
  const test = await buildTestApp(t, {
    backend,
    env: {
      WORK_BUDGET_UNITS: String(UNITS),
      WORK_BUDGET_WINDOW_SECONDS: String(WINDOW_SECONDS),
      WORK_BUDGET_REFUSAL_DELAY_MS: '0',
      ...env,
    },
  });
  const tokenOf = (owner: bigint) => issueToken(test.app, test.config, { owner });
  const me = (token: string) => test.app.inject({ method: 'GET', url: '/auth/me', headers: bearer(token) });
  return { ...test, tokenOf, me, a: await tokenOf(A), b: await tokenOf(B) };
}

/** The command line as an operator runs it, on the app's database. */
const operator = (test: { databaseUrl: string }, ...args: string[]) =>
  cli({ DATABASE_URL: test.databaseUrl, WORK_BUDGET_WINDOW_SECONDS: String(WINDOW_SECONDS) }, ...args);

describeEachBackend(
  "each owner's budget of the service's work",
  (backend) => {
    it('refuses an owner over their budget with 429 and RateLimit headers, while another owner is served', async (t) => {
      const { me, a, b } = await setup(t, backend);
      const first = await me(a);
      assert.equal(first.statusCode, 200, first.body);
      assert.deepEqual(rateLimitItem(first.headers['ratelimit-policy'], 'work'), {
        q: UNITS,
        w: WINDOW_SECONDS,
      });
      assert.equal(work(first)?.r, UNITS - 1, 'a read costs 1');
      for (let spent = 1; spent < UNITS; spent++) assert.equal((await me(a)).statusCode, 200);
      const refused = await me(a);
      assert.equal(refused.statusCode, 429, refused.body);
      assert.equal(problemName(refused), 'WORK_BUDGET_EXHAUSTED');
      assert.ok(Number(refused.headers['retry-after']) >= 1);
      assert.equal(work(refused)?.r, 0);
      // Whole again once it has refilled all of it (a little less if another instance's clock read it).
      assert.ok((work(refused)?.t ?? 0) > WINDOW_SECONDS - 10 && (work(refused)?.t ?? 0) <= WINDOW_SECONDS);
      assert.match(json(refused).extra[0].developer_reason, /20 units per 3600 s/);
      assert.ok(refused.body.length < 2048);

      // The other owner has a budget of their own.
      const other = await me(b);
      assert.equal(other.statusCode, 200);
      assert.equal(work(other)?.r, UNITS - 1);
      assert.equal(json(other).budget.remaining, UNITS - 1);
    });

    it('admits exactly the budget of a concurrent burst, and never touches another owner', async (t) => {
      const { me, a, b } = await setup(t, backend, { WORK_BUDGET_MAX_IN_FLIGHT: '1000' });
      const burst = await Promise.all(Array.from({ length: 60 }, (_, index) => me(index % 3 ? a : b)));
      const admitted = (token: string) =>
        burst.filter((reply, index) => (index % 3 ? a : b) === token && reply.statusCode === 200).length;
      assert.equal(admitted(a), UNITS);
      assert.equal(admitted(b), 20, "B's 20 requests all fit B's own budget");
      assert.ok(burst.every((reply) => reply.statusCode === 200 || reply.statusCode === 429));
    });

    it('charges the body by its size before reading it, refused or not, and the route by its weight', async (t) => {
      const { app, me, a } = await setup(t, backend, { WORK_BUDGET_UNITS: '100' });
      const post = (payload: string) =>
        app.inject({
          method: 'POST',
          url: '/admin/developer/applications',
          headers: { ...bearer(a), 'content-type': 'application/json' },
          payload,
        });
      const keys: Record<string, number> = {};
      for (let index = 0; JSON.stringify(keys).length < 10 * 1024; index++) keys[`k${index}`] = 0;
      const rejected = await post(JSON.stringify(keys));
      assert.equal(rejected.statusCode, 400);
      const size = Buffer.byteLength(JSON.stringify(keys));
      const cost = 5 + Math.ceil(size / 1024);
      assert.equal(work(rejected)?.r, 100 - cost, 'a write costs 5, and a unit per KiB of body');
      // A body larger than what is left (within the route's most) is refused before it is read.
      for (let spent = 0; spent < 20; spent++) await me(a);
      const large: Record<string, string> = { name: 'x', description: 'd'.repeat(900) };
      for (let index = 0; JSON.stringify(large).length < 60 * 1024; index++)
        large[`k${index}`] = 'v'.repeat(100);
      assert.ok(5 + Math.ceil(JSON.stringify(large).length / 1024) > 100 - cost - 20);
      const tooLarge = await post(JSON.stringify(large));
      assert.equal(tooLarge.statusCode, 429, 'refused, not parsed: a 400 would say it was read');
      assert.equal(work(await me(a))?.r, 100 - cost - 20 - 1);
    });

    it('says where the caller stands at GET /auth/me: owner, grants, expiry, budget, upstream share', async (t) => {
      const { me, app, config } = await setup(t, backend);
      const token = await issueToken(app, config, { owner: A, grants: ['player:read', 'ping:read'] });
      const reply = await me(token);
      assert.equal(reply.statusCode, 200, reply.body);
      assert.match(reply.body, /"owner":18446744073709551615[,}]/, 'the owner exact');
      const body = json(reply);
      assert.deepEqual(body.grants, ['player:read', 'ping:read']);
      assert.ok(Date.parse(body.token.expires_at) > Date.now());
      assert.match(body.token.jti, /^[0-9a-f-]{36}$/);
      assert.deepEqual(body.budget, {
        limit: UNITS,
        window_seconds: WINDOW_SECONDS,
        remaining: UNITS - 1,
        reset_seconds: WINDOW_SECONDS / UNITS,
      });
      assert.equal(body.upstream, null, "until the key's limit is known");
      assert.equal((await app.inject({ method: 'GET', url: '/auth/me' })).statusCode, 401);
    });

    it('lets an operator raise one owner’s budget from the command line, and give the default back', async (t) => {
      const test = await setup(t, backend, { WORK_BUDGET_REFRESH_SECONDS: '1' });
      const { me, a, b } = test;
      for (let spent = 0; spent < UNITS; spent++) await me(a);
      assert.equal((await me(a)).statusCode, 429);
      const raised = await operator(test, 'budget', 'set', '--owner', String(A), '--units', '1000000');
      assert.equal(raised.code, 0, raised.stderr);
      assert.deepEqual(
        { ...JSON.parse(raised.stdout), set_at: undefined },
        {
          owner: String(A),
          units: 1_000_000,
          window_seconds: WINDOW_SECONDS,
          default: false,
          set_at: undefined,
          set_by: 'operator',
          reason: null,
        },
      );
      // Every instance applies it within WORK_BUDGET_REFRESH_SECONDS.
      await eventually('the raised budget applies', async () => (await me(a)).statusCode === 200);
      const standing = json(await me(a)).budget;
      assert.equal(standing.limit, 1_000_000);
      assert.equal(json(await me(b)).budget.limit, UNITS, 'only that owner');
      const shown = await operator(test, 'budget', 'show');
      assert.equal(JSON.parse(shown.stdout).owner, String(A));
      assert.equal((await operator(test, 'budget', 'clear', '--owner', String(A))).code, 0);
      assert.equal((await operator(test, 'budget', 'clear', '--owner', String(A))).code, 1, 'none left');
      // A's own budget, read from its policy header: spent past the default, A may be refused (a 429 has no body).
      await eventually(
        "the default applies to A's budget again",
        async () => rateLimitItem((await me(a)).headers['ratelimit-policy'], 'work')?.q === UNITS,
      );
      assert.equal((await operator(test, 'budget', 'set', '--owner', 'x', '--units', '5')).code, 2);
      assert.equal((await operator(test, 'budget', 'set', '--owner', String(A), '--units', '0')).code, 2);
    });

    it('is one budget for the instances of a deployment (with Redis), and each its own without', async (t) => {
      const first = await setup(t, backend);
      const second = await buildTestApp(t, {
        backend,
        databaseUrl: first.databaseUrl,
        redisKeyPrefix: first.config.redisKeyPrefix,
        migrate: false,
        env: {
          WORK_BUDGET_UNITS: String(UNITS),
          WORK_BUDGET_WINDOW_SECONDS: String(WINDOW_SECONDS),
          WORK_BUDGET_REFUSAL_DELAY_MS: '0',
        },
      });
      const onSecond = () => second.app.inject({ method: 'GET', url: '/auth/me', headers: bearer(first.a) });
      for (let spent = 0; spent < UNITS / 2; spent++) assert.equal((await first.me(first.a)).statusCode, 200);
      const statuses: number[] = [];
      for (let spent = 0; spent < UNITS; spent++) statuses.push((await onSecond()).statusCode);
      const admitted = statuses.filter((status) => status === 200).length;
      if (backend.cache === 'redis') {
        // What the first spent (and at most the twentieth it holds reserved) is gone for the second.
        assert.ok(admitted <= UNITS / 2, `${admitted} admitted on the second instance`);
        assert.ok(admitted >= UNITS / 2 - UNITS / 20 - 1, `${admitted} admitted on the second instance`);
      } else assert.equal(admitted, UNITS, 'without Redis each instance has its own buckets');
    });

    it('charges a request its token may not make (403) like any other', async (t) => {
      const { app, me, config } = await setup(t, backend);
      const reader = await issueToken(app, config, { owner: A, grants: ['player:read'] });
      const forbidden = await app.inject({
        method: 'GET',
        url: '/messenger/logging/interaction',
        headers: bearer(reader),
      });
      assert.equal(forbidden.statusCode, 403);
      assert.equal(work(forbidden)?.r, UNITS - 1);
      for (let spent = 1; spent < UNITS; spent++) await me(reader);
      const refused = await app.inject({
        method: 'GET',
        url: '/messenger/logging/interaction',
        headers: bearer(reader),
      });
      assert.equal(refused.statusCode, 429, 'over the budget, even where it would be refused 403');
    });

    it('charges a chunked body the most the route takes, and gives back what it did not use', async (t) => {
      const { app, me, a } = await setup(t, backend, { WORK_BUDGET_UNITS: '200' });
      await app.listen({ host: '127.0.0.1', port: 0 });
      const { port } = app.server.address() as AddressInfo;
      /** POSTs `parts` as a chunked body (Transfer-Encoding: chunked, no Content-Length), over HTTP. */
      const chunked = (parts: readonly string[]) =>
        new Promise<{ status: number; ratelimit: string }>((resolve, reject) => {
          const sent = request(
            {
              host: '127.0.0.1',
              port,
              method: 'POST',
              path: '/admin/developer/applications',
              headers: { ...bearer(a), 'content-type': 'application/json' },
            },
            (answer) => {
              answer.resume();
              answer.on('end', () =>
                resolve({ status: answer.statusCode ?? 0, ratelimit: String(answer.headers.ratelimit) }),
              );
            },
          );
          sent.on('error', reject);
          for (const part of parts) sent.write(part);
          sent.end();
        });
      const keys: Record<string, number> = {};
      for (let index = 0; JSON.stringify(keys).length < 10 * 1024; index++) keys[`k${index}`] = 0;
      const text = JSON.stringify(keys);
      const refused = await chunked([text.slice(0, 5000), text.slice(5000)]);
      assert.equal(refused.status, 400);
      const bodyUnits = Math.ceil(Buffer.byteLength(text) / 1024);
      // Taken ahead: 5 for the write and 64 for the route's most; then the 64 - 11 it did not use given back.
      // Each look spends a unit of its own.
      let looks = 0;
      await eventually('the unused part given back', async () => {
        looks += 1;
        return work(await me(a))?.r === 200 - 5 - bodyUnits - looks;
      });
      // The route's most is more than is left now: refused before the body is read.
      for (let spent = 0; spent < 130; spent++) await me(a);
      assert.equal((await chunked(['{"name":', '"x"}'])).status, 429);
    });

    it('gives back what it took for a body it never read: a GET’s, a refused media type’s, one over the most', async (t) => {
      const { app, config, me, a } = await setup(t, backend, { WORK_BUDGET_UNITS: '200' });
      await app.listen({ host: '127.0.0.1', port: 0 });
      const { port } = app.server.address() as AddressInfo;
      const path = '/admin/developer/applications';
      const auth = `authorization: ${bearer(a).authorization}`;
      // Each look at the budget spends a unit of its own.
      let spent = 0;
      const remaining = async () => {
        spent += 1;
        return work(await me(a))?.r;
      };

      // Declared far over the route's most, the body never sent: refused unread, taken nothing for.
      const huge = await rawHead(port, `POST ${path}`, [
        auth,
        'content-type: application/json',
        'content-length: 5000000000',
      ]);
      assert.equal(huge.status, 413);
      spent += 5;
      assert.equal(rateLimitItem(huge.ratelimit, 'work')?.r, 200 - spent, 'the write’s 5 only');
      assert.equal(await remaining(), 200 - spent);

      // A GET's body is never read: it is not paid for, whatever its length says.
      const get = await rawHead(port, 'GET /auth/me', [auth, 'content-length: 50000'], 'x'.repeat(50_000));
      assert.equal(get.status, 200);
      spent += 1;
      assert.equal(rateLimitItem(get.ratelimit, 'work')?.r, 200 - spent);

      // A media type the route does not take is refused before the body is read, chunked or declared.
      const chunkedText = await rawHead(
        port,
        `POST ${path}`,
        [auth, 'content-type: text/plain', 'transfer-encoding: chunked'],
        '5\r\nhello\r\n0\r\n\r\n',
      );
      assert.equal(chunkedText.status, 415);
      spent += 5;
      const declaredText = await rawHead(port, `POST ${path}`, [
        auth,
        'content-type: text/plain',
        'content-length: 40000',
      ]);
      assert.equal(declaredText.status, 415);
      spent += 5;
      assert.equal(rateLimitItem(declaredText.ratelimit, 'work')?.r, 200 - spent);
      assert.equal(await remaining(), 200 - spent);

      // JSON refused once read (a charset other than UTF-8, an encoded body): the reading is paid for.
      for (const headers of [
        ['content-type: application/json; charset=latin1'],
        ['content-type: application/json', 'content-encoding: gzip'],
      ]) {
        const read = await rawHead(
          port,
          `POST ${path}`,
          [auth, ...headers, 'content-length: 20480'],
          'x'.repeat(20_480),
        );
        assert.equal(read.status, 415, headers.join());
        spent += 5 + 20;
        assert.equal(await remaining(), 200 - spent, headers.join());
      }

      // A chunked body over the route's most was read up to it before the 413: that much is kept.
      const most = Math.ceil(config.server.bodyLimitBytes / 1024);
      const chunk = 'a'.repeat(16 * 1024);
      const over = await rawHead(
        port,
        `POST ${path}`,
        [auth, 'content-type: application/json', 'transfer-encoding: chunked'],
        `${chunk.length.toString(16)}\r\n${chunk}\r\n`.repeat(Math.ceil((most * 1024) / chunk.length) + 1),
      );
      assert.equal(over.status, 413);
      spent += 5 + most;
      assert.equal(await remaining(), 200 - spent);
    });

    it('waits for the budget up to WORK_BUDGET_REFUSAL_DELAY_MS rather than refuse at once', async (t) => {
      // 2 units, refilled in 1 s: a third request waits about half a second, then goes.
      const { me, a } = await setup(t, backend, {
        WORK_BUDGET_UNITS: '2',
        WORK_BUDGET_WINDOW_SECONDS: '1',
        WORK_BUDGET_REFUSAL_DELAY_MS: '5000',
      });
      assert.equal((await me(a)).statusCode, 200);
      assert.equal((await me(a)).statusCode, 200);
      assert.equal((await me(a)).statusCode, 200, 'served once the budget had refilled');
    });

    it('lets an owner have WORK_BUDGET_MAX_IN_FLIGHT requests in progress at once on an instance', async (t) => {
      const fake = await startFakeUpstream();
      t.after(() => fake.close());
      const { app, a, b } = await setup(t, backend, {
        WORK_BUDGET_MAX_IN_FLIGHT: '2',
        HYPIXEL_API_URL: fake.url,
        MOJANG_API_URL: fake.url,
        HYPIXEL_API_KEY: FAKE_API_KEY,
      });
      fake.misbehave({ delayMs: 400 });
      const lookUp = (token: string, uuid: string) =>
        app.inject({ method: 'GET', url: `/player/${uuid}`, headers: bearer(token) });
      const cold = ['a', 'b', 'c'].map((digit) => digit.repeat(32));
      const [other, ...mine] = await Promise.all([
        lookUp(b, 'd'.repeat(32)),
        ...cold.map((uuid) => lookUp(a, uuid)),
      ]);
      const statuses = mine.map((reply) => reply.statusCode).sort();
      assert.deepEqual(statuses, [404, 404, 429], 'two in progress (never joined, after the slow upstream)');
      const refused = mine.find((reply) => reply.statusCode === 429) as Reply;
      assert.equal(problemName(refused), 'TOO_MANY_IN_FLIGHT');
      assert.ok(Number(refused.headers['retry-after']) >= 1);
      assert.equal(other?.statusCode, 404, 'another owner has slots of their own');
      // Slots come back once the answers are done.
      fake.misbehave({});
      assert.equal((await lookUp(a, 'e'.repeat(32))).statusCode, 404);
    });

    it('gives an owner whose budget was raised slots in flight in proportion', async (t) => {
      const fake = await startFakeUpstream();
      t.after(() => fake.close());
      const test = await setup(t, backend, {
        WORK_BUDGET_MAX_IN_FLIGHT: '2',
        WORK_BUDGET_REFRESH_SECONDS: '1',
        HYPIXEL_API_URL: fake.url,
        MOJANG_API_URL: fake.url,
        HYPIXEL_API_KEY: FAKE_API_KEY,
      });
      const { app, me, a } = test;
      // Twice the default budget: twice the slots, 4.
      const raised = await operator(
        test,
        'budget',
        'set',
        '--owner',
        String(A),
        '--units',
        String(2 * UNITS),
      );
      assert.equal(raised.code, 0, raised.stderr);
      await eventually('the raised budget applies', async () => json(await me(a)).budget.limit === 2 * UNITS);
      fake.misbehave({ delayMs: 400 });
      const lookUp = (uuid: string) =>
        app.inject({ method: 'GET', url: `/player/${uuid}`, headers: bearer(a) });
      const answers = await Promise.all(['a', 'b', 'c', 'e', 'f'].map((digit) => lookUp(digit.repeat(32))));
      const statuses = answers.map((reply) => reply.statusCode).sort();
      assert.deepEqual(statuses, [404, 404, 404, 404, 429], 'four in progress at once, the fifth refused');
      assert.equal(
        problemName(answers.find((reply) => reply.statusCode === 429) as Reply),
        'TOO_MANY_IN_FLIGHT',
      );
    });

    it('charges a ping history read a unit per day it returns, after the read', async (t) => {
      const { app, a } = await setup(t, backend, { WORK_BUDGET_UNITS: '100' });
      const url = '/ping/20934ef9488c465180a78f861586b4cf';
      const days = 4;
      const samples = Array.from({ length: days }, (_, index) => ({
        ping: 40,
        lobby: 'lobby',
        at: new Date(Date.now() - index * 86_400_000 - 60_000).toISOString(),
      }));
      const posted = await app.inject({
        method: 'POST',
        url,
        headers: { ...bearer(a), 'content-type': 'application/json' },
        payload: JSON.stringify({ samples }),
      });
      assert.equal(posted.statusCode, 200, posted.body);
      const before = work(posted)?.r ?? 0;
      const read = await app.inject({ method: 'GET', url, headers: bearer(a) });
      assert.equal(read.statusCode, 200, read.body);
      assert.equal(json(read).data.length, days);
      const after = await app.inject({ method: 'GET', url: '/auth/me', headers: bearer(a) });
      assert.equal(work(after)?.r, before - 1 - days - 1, 'the read, its days, then this look');
      const limited = await app.inject({ method: 'GET', url: `${url}?limit=1`, headers: bearer(a) });
      assert.equal(json(limited).data.length, 1);
      const last = await app.inject({ method: 'GET', url: '/auth/me', headers: bearer(a) });
      assert.equal(work(last)?.r, before - 1 - days - 1 - 2 - 1, 'a day returned, a day paid');
    });

    it('charges a listing of interaction logs a unit per 256 bytes of the logs it returns, after the read', async (t) => {
      const { app, a } = await setup(t, backend, { WORK_BUDGET_UNITS: '1000' });
      const url = '/messenger/logging/interaction';
      for (let index = 0; index < 3; index++) {
        const options = JSON.stringify({ text: 'o'.repeat(300 * (index + 1)) });
        const posted = await app.inject({
          method: 'POST',
          url,
          headers: { ...bearer(a), 'content-type': 'application/json' },
          payload: logText({ options }),
        });
        assert.equal(posted.statusCode, 200, posted.body);
      }
      const { rows } = await sql<{
        bytes: number;
      }>`select sum(length(document)) as bytes from interaction_logs`.execute(app.db);
      const bytes = Number(rows[0]?.bytes);
      const before = work(await app.inject({ method: 'GET', url: '/auth/me', headers: bearer(a) }))?.r ?? 0;
      const listed = await app.inject({ method: 'GET', url, headers: bearer(a) });
      assert.equal(listed.statusCode, 200, listed.body);
      assert.equal(json(listed).data.length, 3);
      const after = work(await app.inject({ method: 'GET', url: '/auth/me', headers: bearer(a) }))?.r;
      assert.equal(after, before - 1 - Math.ceil(bytes / 256) - 1, 'the read, its bytes, then this look');
    });

    it('says both limits on a refused key collection: the address limit and the owner budget', async (t) => {
      const { app, config, me } = await setup(t, backend);
      const reviewer = await issueToken(app, config, { owner: A, grants: ['applications:review'] });
      const developer = await issueToken(app, config, { owner: B });
      const applied = await app.inject({
        method: 'POST',
        url: '/admin/developer/applications',
        headers: bearer(developer),
        payload: { name: 'bot', grants: ['player:read'] },
      });
      assert.equal(applied.statusCode, 200, applied.body);
      const approved = await app.inject({
        method: 'POST',
        url: `/admin/developer/applications/${json(applied).id}/approve`,
        headers: bearer(reviewer),
      });
      assert.equal(approved.statusCode, 200, approved.body);
      for (let spent = 0; spent < UNITS; spent++) await me(developer);
      const refused = await app.inject({
        method: 'POST',
        url: `/admin/developer/applications/${json(applied).id}/key`,
        headers: bearer(developer),
      });
      assert.equal(refused.statusCode, 429, refused.body);
      assert.equal(problemName(refused), 'WORK_BUDGET_EXHAUSTED');
      assert.doesNotMatch(refused.body, /pds_/, 'no key in a refusal');
      assert.ok(rateLimitItem(refused.headers['ratelimit-policy'], 'address'), 'the address item stays');
      assert.ok(rateLimitItem(refused.headers['ratelimit-policy'], 'work'));
      assert.equal(rateLimitItem(refused.headers.ratelimit, 'work')?.r, 0);
    });

    it('takes a ping batch’s samples before writing them: an owner who cannot pay gets 429 and nothing is written', async (t) => {
      const { app, me, a } = await setup(t, backend, { WORK_BUDGET_UNITS: '100' });
      const batch = (count: number, from: number) => ({
        samples: Array.from({ length: count }, (_, index) => ({
          ping: 40,
          lobby: 'lobby',
          at: new Date(Date.now() - (from + index) * 1000).toISOString(),
        })),
      });
      const post = (body: unknown) =>
        app.inject({
          method: 'POST',
          url: '/ping/20934ef9488c465180a78f861586b4cf',
          headers: { ...bearer(a), 'content-type': 'application/json' },
          payload: JSON.stringify(body),
        });
      for (let spent = 0; spent < 10; spent++) await me(a);
      const refused = await post(batch(95, 0));
      assert.equal(refused.statusCode, 429, refused.body);
      assert.equal(problemName(refused), 'WORK_BUDGET_EXHAUSTED');
      const { rows } = await sql<{ count: number }>`select count(*) as count from ping_samples`.execute(
        app.db,
      );
      assert.equal(Number(rows[0]?.count), 0, 'nothing written');
      const fits = await post(batch(50, 100));
      assert.equal(fits.statusCode, 200, fits.body);
      assert.equal(json(fits).stored, 50);
    });

    it('holds a refusal for WORK_BUDGET_REFUSAL_DELAY_MS, at most until it would be admitted', async (t) => {
      const { me, a } = await setup(t, backend, { WORK_BUDGET_REFUSAL_DELAY_MS: '300' });
      for (let spent = 0; spent < UNITS; spent++) await me(a);
      const started = Date.now();
      const refused = await me(a);
      assert.equal(refused.statusCode, 429);
      // A lower bound only: it shows the answer was held, not how fast anything is.
      assert.ok(Date.now() - started >= 250, 'held');
    });
  },
  { caches: true },
);

/**
 * Writes one raw HTTP/1.1 request (`line` is its method and path; `body` as it goes on the wire, possibly
 * less than its headers say) and reads its answer's status and RateLimit header, then drops the connection.
 */
function rawHead(
  port: number,
  line: string,
  headers: readonly string[],
  body = '',
): Promise<{ status: number; ratelimit: string | undefined }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (data: string) => {
      received += data;
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.destroy();
      const [status, ...fields] = received.slice(0, end).split('\r\n');
      const ratelimit = fields.find((field) => /^ratelimit:/i.test(field))?.replace(/^ratelimit:\s*/i, '');
      resolve({ status: Number(status?.split(' ')[1]), ratelimit });
    });
    socket.on('error', reject);
    socket.on('end', () => reject(new Error(`closed before an answer: ${JSON.stringify(received)}`)));
    socket.write(`${line} HTTP/1.1\r\nhost: 127.0.0.1\r\n${headers.join('\r\n')}\r\n\r\n${body}`);
  });
}
