import assert from 'node:assert/strict';
import { after, before, it, type TestContext } from 'node:test';
import { sql } from 'kysely';
import type { Grant } from '../../../src/platform/auth/grants.js';
import { describeEachBackend } from '../../helpers/backends.js';
import { byKey, byReference } from '../../helpers/constraint-errors.js';
import { type FakeUpstream, FIXTURE_PLAYERS, startFakeUpstream } from '../../helpers/fake-upstream.js';
import { buildPlayerTestApp } from '../../helpers/player-app.js';
import { json, problemName, problems, type Reply } from '../../helpers/replies.js';
import { bearer, issueToken } from '../../helpers/tokens.js';
import { logText } from '../interactions/interaction-logs.js';

/** Two developers' bots and an operator's auditor: owners are Discord IDs. */
const A = 111111111111111111n;
const B = 222222222222222222n;
const AUDITOR = 333333333333333333n;
const BOTH: readonly Grant[] = ['messenger:read', 'messenger:write', 'messenger:log'];

/** Discord users: U is seen by both bots; X is A's only, V is B's only. */
const U = '18446744073709551615';
const X = '1234567890123456789';
const V = '223456789012345678';
const MINIKLOON = FIXTURE_PLAYERS.minikloon.uuid;
const BUILDER = FIXTURE_PLAYERS.builder.uuid;
const SKYBLOCKER = FIXTURE_PLAYERS.skyblocker.uuid;
/** A UUID Hypixel does not know (the fake answers `player: null`). */
const NEVER_JOINED = '0123456789abcdef0123456789abcdef';
/** The Discord names the fixture players' Hypixel profiles link. */
const MINIKLOON_DISCORD = 'Minikloon#0001';
const BUILDER_DISCORD = 'builder_247#2804';

const profile = (user: string) => `/messenger/user/${user}/profile`;
const accounts = (user: string) => `/messenger/user/${user}/accounts`;

type Account = { id: string; snowflake: string; is_primary: boolean };

describeEachBackend('messenger users, one view per owner', (backend) => {
  let fake: FakeUpstream;
  before(async () => {
    fake = await startFakeUpstream();
  });
  after(() => fake.close());

  async function setup(t: TestContext, env: Record<string, string> = {}) {
    const test = await buildPlayerTestApp(t, fake, { backend, env, grants: ['player:read'] });
    const call = (token: string, method: 'GET' | 'PUT' | 'POST' | 'DELETE', url: string, body?: string) =>
      test.app.inject({
        method,
        url,
        headers: { ...bearer(token), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { payload: body }),
      });
    /** What a bot with this token can do. */
    const botOf = (token: string) => ({
      profile: (user: string, query = '') => call(token, 'GET', `${profile(user)}${query}`),
      setLocale: (user: string, locale: string) =>
        call(token, 'PUT', profile(user), JSON.stringify({ locale })),
      link: (user: string, player: string, extra: Record<string, unknown> = {}) =>
        call(token, 'POST', accounts(user), JSON.stringify({ player, ...extra })),
      unlink: (user: string, uuid: string) => call(token, 'DELETE', `${accounts(user)}/${uuid}`),
      makePrimary: (user: string, uuid: string) => call(token, 'PUT', `${accounts(user)}/${uuid}/primary`),
      log: (user: string, username: string) =>
        call(token, 'POST', '/messenger/logging/interaction', logText({ user, username, server: null })),
      /** The user as this bot sees it; undefined when unknown (404). */
      async view(user: string, query = '') {
        const reply = await call(token, 'GET', `${profile(user)}${query}`);
        if (reply.statusCode === 404) return undefined;
        assert.equal(reply.statusCode, 200, reply.body);
        return json(reply) as {
          user_profile: { snowflake: string; locale: string };
          linked_accounts: Account[];
        };
      },
    });
    const token = (owner: bigint, grants: readonly Grant[]) =>
      issueToken(test.app, test.config, { owner, grants });
    const a = botOf(await token(A, BOTH));
    const b = botOf(await token(B, BOTH));
    const auditor = botOf(await token(AUDITOR, ['messenger:read', 'messenger:audit']));
    return { ...test, a, b, auditor };
  }

  const ok = (reply: Reply, what = '') => assert.equal(reply.statusCode, 200, `${what} ${reply.body}`);
  const refused = (reply: Reply, status: number, name: string, what = '') => {
    assert.equal(reply.statusCode, status, `${what} ${reply.body}`);
    assert.equal(problemName(reply), name, what);
  };
  const ids = (view: { linked_accounts: Account[] } | undefined) =>
    view?.linked_accounts.map((account) => [account.id, account.is_primary]);

  it("changes nothing B sees when A sets the locale, unlinks, re-primaries or links B's user's accounts", async (t) => {
    const { a, b } = await setup(t);
    ok(await b.link(U, MINIKLOON));
    ok(await b.link(U, BUILDER));
    ok(await b.setLocale(U, 'pt-BR'));
    const before = await b.view(U);
    assert.deepEqual(ids(before), [
      [MINIKLOON, true],
      [BUILDER, false],
    ]);

    // Each of A's writes acts on A's own view of the user, which holds none of B's accounts.
    const locale = await a.setLocale(U, 'fr-FR');
    ok(locale);
    assert.deepEqual(json(locale), { user_profile: { snowflake: U, locale: 'fr-FR' }, linked_accounts: [] });
    refused(await a.unlink(U, MINIKLOON), 404, 'ACCOUNT_NOT_LINKED', 'unlink');
    refused(await a.makePrimary(U, BUILDER), 404, 'ACCOUNT_NOT_LINKED', 'primary');
    refused(await a.unlink(V, MINIKLOON), 404, 'MESSENGER_USER_NOT_FOUND', 'a user only B knows');
    refused(await a.makePrimary(V, MINIKLOON), 404, 'MESSENGER_USER_NOT_FOUND', 'a user only B knows');
    // B's player linked to a user of A's own: in A's view only, so B's later links are not squatted.
    ok(await a.link(X, MINIKLOON));
    ok(await a.link(X, SKYBLOCKER));
    ok(await a.link(U, BUILDER), "B's account, in A's view of B's user");

    ok(await b.link(V, SKYBLOCKER), 'SkyBlocker is free in B’s view');
    assert.deepEqual(await b.view(U), before, "B's view of U is exactly as it was");
    assert.deepEqual(ids(await b.view(V)), [[SKYBLOCKER, true]]);
    assert.equal(await b.view(X), undefined, "A's user is unknown to B");

    const mine = await a.view(U);
    assert.equal(mine?.user_profile.locale, 'fr-FR');
    assert.deepEqual(ids(mine), [[BUILDER, true]]);
    assert.deepEqual(ids(await a.view(X)), [
      [MINIKLOON, true],
      [SKYBLOCKER, false],
    ]);
    assert.equal(await a.view(V), undefined, "B's user is unknown to A");
  });

  it('knows a user its owner logged (en-US, no accounts) and 404s one only another owner knows', async (t) => {
    const { a, b } = await setup(t);
    ok(await b.log(U, 'notch'));
    assert.deepEqual(await b.view(U), {
      user_profile: { snowflake: U, locale: 'en-US' },
      linked_accounts: [],
    });
    refused(await a.profile(U), 404, 'MESSENGER_USER_NOT_FOUND', 'logged by B only');
    refused(await b.unlink(U, MINIKLOON), 404, 'ACCOUNT_NOT_LINKED', 'known, but nothing linked');
    refused(await b.makePrimary(U, MINIKLOON), 404, 'ACCOUNT_NOT_LINKED');
    refused(await a.unlink(U, MINIKLOON), 404, 'MESSENGER_USER_NOT_FOUND');

    ok(await b.link(U, MINIKLOON));
    ok(await b.setLocale(U, 'ja'));
    assert.deepEqual(await b.view(U), {
      user_profile: { snowflake: U, locale: 'ja' },
      linked_accounts: [{ id: MINIKLOON, snowflake: U, is_primary: true }],
    });
    refused(await a.profile(U), 404, 'MESSENGER_USER_NOT_FOUND', 'still unknown to A');
    ok(await a.log(U, 'notch'));
    assert.deepEqual(await a.view(U), {
      user_profile: { snowflake: U, locale: 'en-US' },
      linked_accounts: [],
    });
  });

  it('verifies against the username the same owner logged or gave, never one another owner logged', async (t) => {
    const { a, b } = await setup(t);
    // A logs B's user under the name on Minikloon's Hypixel profile.
    ok(await a.log(U, MINIKLOON_DISCORD));
    refused(await b.link(U, MINIKLOON, { verify: true }), 409, 'USERNAME_UNKNOWN', "A's log is not B's");
    ok(await b.log(U, 'someone_else'));
    const forged = await b.link(U, MINIKLOON, { verify: true, username: MINIKLOON_DISCORD });
    refused(forged, 409, 'LINK_NOT_VERIFIED', "B's own log wins over the request's username");
    assert.match(problems(forged)[0]?.reason ?? '', /different/);
    assert.deepEqual(ids(await b.view(U)), [], 'nothing linked in B’s view');

    // A's log vouches in A's view only.
    ok(await a.link(U, MINIKLOON, { verify: true }));
    assert.deepEqual(ids(await a.view(U)), [[MINIKLOON, true]]);
    assert.deepEqual(ids(await b.view(U)), []);
    ok(await b.link(U, MINIKLOON), 'unverified, B may still link it in its own view');

    // The username B gave when it created the user comes before the request's; A's log never counts.
    ok(await b.link(V, SKYBLOCKER, { username: 'plain_user' }));
    ok(await a.log(V, BUILDER_DISCORD));
    refused(await b.link(V, BUILDER, { verify: true }), 409, 'LINK_NOT_VERIFIED', 'created with plain_user');
    refused(
      await b.link(V, BUILDER, { verify: true, username: BUILDER_DISCORD }),
      409,
      'LINK_NOT_VERIFIED',
      "the name B gave first, not the request's",
    );
    assert.deepEqual(ids(await b.view(V)), [[SKYBLOCKER, true]]);
    ok(await b.log(V, BUILDER_DISCORD));
    ok(await b.link(V, BUILDER, { verify: true }), "B's own log now vouches");
  });

  it("lets an auditor read any owner's view; a non-auditor naming another owner gets 403", async (t) => {
    const { a, b, auditor } = await setup(t);
    ok(await b.link(U, MINIKLOON));
    ok(await a.setLocale(U, 'de-DE'));
    assert.deepEqual(await auditor.view(U, `?owner=${B}`), await b.view(U));
    assert.deepEqual(await auditor.view(U, `?owner=${A}`), await a.view(U));
    assert.deepEqual(ids(await auditor.view(U, `?owner=${B}`)), [[MINIKLOON, true]]);
    assert.equal((await auditor.view(U, `?owner=${A}`))?.user_profile.locale, 'de-DE');
    assert.equal(await auditor.view(U), undefined, "without owner, the auditor's own view");
    assert.equal(await auditor.view(U, '?owner=0'), undefined, 'nothing was kept from before owners');

    for (const owner of [B, AUDITOR, 0n]) {
      const reply = await a.profile(U, `?owner=${owner}`);
      refused(reply, 403, 'NOT_RESOURCE_OWNER', `A naming ${owner}`);
      assert.match(String(reply.headers['www-authenticate']), /insufficient_scope.*messenger:audit/);
      assert.doesNotMatch(reply.body, new RegExp(MINIKLOON));
    }
    assert.deepEqual(await a.view(U, `?owner=${A}`), await a.view(U), 'naming itself is fine');
    for (const owner of ['abc', '-1', '00', '01', '18446744073709551616', '1.5', '']) {
      const reply = await a.profile(U, `?owner=${owner}`);
      refused(reply, 400, 'INVALID_FIELD', `owner=${owner}`);
      assert.match(problems(reply)[0]?.developer_reason ?? '', /^query\/owner must be an owner/);
    }
    refused(await a.profile(U, `?owner=${A}&owner=${B}`), 400, 'INVALID_FIELD', 'two owners');
  });

  it('lets A and B link one account to their users at the same moment: each in its own view', async (t) => {
    const { a, b } = await setup(t, { MESSENGER_MAX_LINKED_ACCOUNTS: '5' });
    const players = [MINIKLOON, BUILDER, SKYBLOCKER, NEVER_JOINED, 'fedcba9876543210fedcba9876543210'];
    for (const uuid of players) {
      const replies = await Promise.all([a.link(X, uuid), b.link(V, uuid), a.link(U, uuid), b.link(U, uuid)]);
      // Across owners nothing is contended; within one, A's X and U want the same account (and B's V and U),
      // and one of each owner's pair wins.
      const statuses = replies.map((reply) => reply.statusCode);
      assert.deepEqual([statuses[0], statuses[2]].sort(), [200, 409], replies.map((r) => r.body).join());
      assert.deepEqual([statuses[1], statuses[3]].sort(), [200, 409], replies.map((r) => r.body).join());
      for (const reply of replies.filter((reply) => reply.statusCode === 409)) {
        assert.equal(problemName(reply), 'ACCOUNT_LINKED_ELSEWHERE');
        assert.doesNotMatch(reply.body, new RegExp(`${U}|${X}|${V}|${A}|${B}`), 'naming nobody');
      }
    }
    for (const bot of [a, b]) {
      const views = [await bot.view(U), await bot.view(bot === a ? X : V)];
      const linked = views.flatMap((view) => view?.linked_accounts ?? []);
      assert.deepEqual(linked.map((account) => account.id).sort(), [...players].sort(), 'each linked once');
      for (const view of views.filter((view) => view && view.linked_accounts.length > 0))
        assert.equal(view?.linked_accounts.filter((account) => account.is_primary).length, 1);
    }
  });

  it('keeps every invariant per owner under both owners’ concurrent writes on one user', async (t) => {
    const { a, b } = await setup(t, { MESSENGER_MAX_LINKED_ACCOUNTS: '3' });
    const players = [MINIKLOON, BUILDER, SKYBLOCKER, NEVER_JOINED];
    for (let round = 0; round < 3; round++) {
      const calls = [a, b].flatMap((bot) =>
        players.flatMap((uuid) => [
          bot.link(U, uuid),
          bot.makePrimary(U, uuid),
          bot.unlink(U, uuid),
          bot.link(U, uuid, { primary: true }),
        ]),
      );
      for (const reply of await Promise.all(calls))
        assert.ok([200, 404, 409].includes(reply.statusCode), reply.body);
      for (const bot of [a, b]) {
        const linked = (await bot.view(U))?.linked_accounts ?? [];
        assert.ok(linked.length <= 3, `at most 3 accounts, had ${linked.length}`);
        if (linked.length > 0) {
          assert.equal(linked.filter((account) => account.is_primary).length, 1, JSON.stringify(linked));
          assert.equal(linked[0]?.is_primary, true, 'the primary first');
        }
      }
    }
  });

  it('holds the keys per owner in the database itself', async (t) => {
    const { a, b, app } = await setup(t);
    ok(await a.link(U, MINIKLOON));
    ok(await b.link(U, MINIKLOON));
    ok(await a.link(U, BUILDER));
    const { rows } = await sql<{ owner: string; uuid: string; is_primary: number }>`
      select owner, uuid, is_primary from linked_accounts order by owner, linked_at`.execute(app.db);
    assert.deepEqual(
      rows.map((row) => [row.owner, row.uuid, Number(row.is_primary)]),
      [
        [`${A}`, MINIKLOON, 1],
        [`${A}`, BUILDER, 0],
        [`${B}`, MINIKLOON, 1],
      ],
      'one account, one user and one primary in each of two owners’ views',
    );
    await assert.rejects(
      sql`update linked_accounts set is_primary = 1 where owner = ${`${A}`} and uuid = ${BUILDER}`.execute(
        app.db,
      ),
      byKey,
      "a second primary in one owner's view is refused by the partial unique index",
    );
    // Another user in A's view, so that the reference to the user holds and only the key can refuse.
    ok(await a.link(X, SKYBLOCKER));
    await assert.rejects(
      sql`insert into linked_accounts (owner, uuid, snowflake, is_primary, linked_at)
          values (${`${A}`}, ${MINIKLOON}, ${X}, 0, 1)`.execute(app.db),
      byKey,
      "an account linked twice in one owner's view is refused by the key",
    );
    await assert.rejects(
      sql`insert into linked_accounts (owner, uuid, snowflake, is_primary, linked_at)
          values (${`${AUDITOR}`}, ${SKYBLOCKER}, ${U}, 0, 1)`.execute(app.db),
      byReference,
      "an account of a user missing from the owner's view is refused by the reference",
    );
  });
});
