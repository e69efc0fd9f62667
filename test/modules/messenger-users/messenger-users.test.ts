import assert from 'node:assert/strict';
import { after, before, it, type TestContext } from 'node:test';
import { sql } from 'kysely';
import { describeEachBackend } from '../../helpers/backends.js';
import { byKey } from '../../helpers/constraint-errors.js';
import { type FakeUpstream, FIXTURE_PLAYERS, startFakeUpstream } from '../../helpers/fake-upstream.js';
import { buildPlayerTestApp } from '../../helpers/player-app.js';
import { problems } from '../../helpers/replies.js';
import { bearer, issueToken } from '../../helpers/tokens.js';

const USER = '18446744073709551615'; // 20 digits, 2^64-1
const OTHER = '1234567890123456789'; // 19 digits
/** The owner of the suite's tokens (issueToken's default): whose view the users are in. */
const OWNER = '123456789012345678';
const MINIKLOON = FIXTURE_PLAYERS.minikloon.uuid;
const BUILDER = FIXTURE_PLAYERS.builder.uuid;
const SKYBLOCKER = FIXTURE_PLAYERS.skyblocker.uuid;
/** A UUID Hypixel does not know (the fake answers `player: null`). */
const NEVER_JOINED = '0123456789abcdef0123456789abcdef';

const profile = (user = USER) => `/messenger/user/${user}/profile`;
const accounts = (user = USER) => `/messenger/user/${user}/accounts`;

describeEachBackend('messenger users (endpoint 7)', (backend) => {
  let fake: FakeUpstream;
  before(async () => {
    fake = await startFakeUpstream();
  });
  after(() => fake.close());

  async function setup(t: TestContext, env: Record<string, string> = {}) {
    const test = await buildPlayerTestApp(t, fake, {
      backend,
      env,
      grants: ['messenger:read', 'messenger:write'],
    });
    const send = (method: 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown, token = test.token) =>
      test.app.inject({
        method,
        url,
        headers: { ...bearer(token), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      });
    const link = (player: string, extra: Record<string, unknown> = {}, user = USER) =>
      send('POST', accounts(user), { player, ...extra });
    const linked = async (user = USER) => {
      const reply = await test.get(profile(user));
      assert.equal(reply.statusCode, 200, reply.body);
      return reply.json().linked_accounts as { id: string; snowflake: string; is_primary: boolean }[];
    };
    return { ...test, send, link, linked };
  }

  it('shows a user with exact 19- and 20-digit snowflakes, the default locale, the primary first', async (t) => {
    const { get, link } = await setup(t);
    assert.equal((await link(MINIKLOON)).statusCode, 200);
    const reply = await link(BUILDER, { primary: true });
    assert.equal(reply.statusCode, 200, reply.body);
    const shown = await get(profile());
    assert.deepEqual(shown.json(), {
      user_profile: { snowflake: USER, locale: 'en-US' },
      linked_accounts: [
        { id: BUILDER, snowflake: USER, is_primary: true },
        { id: MINIKLOON, snowflake: USER, is_primary: false },
      ],
    });
    assert.deepEqual(reply.json(), shown.json(), 'a write answers the profile after it');
    const other = await link(SKYBLOCKER, {}, OTHER);
    assert.equal(other.statusCode, 200, other.body);
    assert.match(other.body, /"snowflake":"1234567890123456789"/);
  });

  it('sets the locale in canonical form, creating the user; refuses what is not a language tag', async (t) => {
    const { get, send } = await setup(t);
    const set = await send('PUT', profile(), { locale: 'pt-br' });
    assert.equal(set.statusCode, 200, set.body);
    assert.deepEqual(set.json(), { user_profile: { snowflake: USER, locale: 'pt-BR' }, linked_accounts: [] });
    assert.equal((await get(profile())).json().user_profile.locale, 'pt-BR');
    for (const locale of ['', 'not a locale', 'x'.repeat(65), 'en_US!', 42]) {
      const reply = await send('PUT', profile(), { locale });
      assert.equal(reply.statusCode, 400, `${JSON.stringify(locale)}: ${reply.body}`);
      assert.match(problems(reply)[0]?.developer_reason ?? '', /locale/);
    }
    assert.equal((await send('PUT', profile(), { locale: 'en-US', extra: 1 })).statusCode, 400);
  });

  it('answers 404 for an unknown user, 400 for a bad snowflake or UUID, 403 without the grant', async (t) => {
    const { get, send, app, config } = await setup(t);
    const unknown = await get(profile());
    assert.equal(unknown.statusCode, 404);
    assert.equal(problems(unknown)[0]?.name, 'MESSENGER_USER_NOT_FOUND');
    for (const bad of ['123', '18446744073709551616', 'abc', '-1234567890123456789']) {
      assert.equal((await get(profile(bad))).statusCode, 400, bad);
    }
    assert.equal((await send('DELETE', `${accounts()}/not-a-uuid`)).statusCode, 400);
    assert.equal((await send('DELETE', `${accounts()}/${MINIKLOON}`)).statusCode, 404);
    const reader = await issueToken(app, config, { grants: ['messenger:read'] });
    const refused = await send('POST', accounts(), { player: MINIKLOON }, reader);
    assert.equal(refused.statusCode, 403);
    const noRead = await issueToken(app, config, { grants: ['messenger:write'] });
    assert.equal((await get(profile(), noRead)).statusCode, 403);
    assert.equal((await send('POST', accounts(), { player: 'not a player!' })).statusCode, 400);
  });

  it('links by username through the players service, and 404s a username nobody has', async (t) => {
    const { link, linked } = await setup(t);
    const reply = await link('minikloon');
    assert.equal(reply.statusCode, 200, reply.body);
    assert.deepEqual(await linked(), [{ id: MINIKLOON, snowflake: USER, is_primary: true }]);
    const nobody = await link('NoSuchPlayer12');
    assert.equal(nobody.statusCode, 404);
    assert.equal(problems(nobody)[0]?.name, 'PLAYER_NOT_FOUND');
  });

  it('keeps an account to one user: 409 naming neither the other user nor their ID', async (t) => {
    const { link, linked } = await setup(t);
    assert.equal((await link(MINIKLOON, {}, OTHER)).statusCode, 200);
    const taken = await link(MINIKLOON);
    assert.equal(taken.statusCode, 409);
    assert.equal(problems(taken)[0]?.name, 'ACCOUNT_LINKED_ELSEWHERE');
    assert.doesNotMatch(taken.body, new RegExp(OTHER));
    assert.equal(
      (await link(MINIKLOON, {}, OTHER)).statusCode,
      200,
      'linking it again to its user is no change',
    );
    assert.equal((await linked(OTHER)).length, 1);
  });

  it('unlinking the primary promotes the oldest remaining; primary can be moved; the limit holds', async (t) => {
    const { link, linked, send } = await setup(t, { MESSENGER_MAX_LINKED_ACCOUNTS: '3' });
    for (const uuid of [MINIKLOON, BUILDER, SKYBLOCKER]) assert.equal((await link(uuid)).statusCode, 200);
    const over = await link(NEVER_JOINED);
    assert.equal(over.statusCode, 409);
    assert.equal(problems(over)[0]?.name, 'TOO_MANY_LINKED_ACCOUNTS');
    const moved = await send('PUT', `${accounts()}/${SKYBLOCKER}/primary`);
    assert.equal(moved.statusCode, 200, moved.body);
    assert.deepEqual(
      (await linked()).map((account) => [account.id, account.is_primary]),
      [
        [SKYBLOCKER, true],
        [MINIKLOON, false],
        [BUILDER, false],
      ],
    );
    assert.equal((await send('DELETE', `${accounts()}/${SKYBLOCKER}`)).statusCode, 200);
    assert.deepEqual(
      (await linked()).map((account) => [account.id, account.is_primary]),
      [
        [MINIKLOON, true],
        [BUILDER, false],
      ],
      'the oldest remaining became primary',
    );
    const dashed = `${BUILDER.slice(0, 8)}-${BUILDER.slice(8, 12)}-${BUILDER.slice(12, 16)}-${BUILDER.slice(16, 20)}-${BUILDER.slice(20)}`;
    assert.equal((await send('DELETE', `${accounts()}/${dashed.toUpperCase()}`)).statusCode, 200);
    assert.equal((await send('DELETE', `${accounts()}/${MINIKLOON}`)).statusCode, 200);
    assert.deepEqual(await linked(), []);
    assert.equal((await send('PUT', `${accounts()}/${MINIKLOON}/primary`)).statusCode, 404);
  });

  it('links nothing and creates no user when the link write fails midway', async (t) => {
    const { link, get, app } = await setup(t);
    // The user's row is written first in the transaction; the account's insert then fails.
    await sql
      .raw(
        backend.dialect === 'sqlite'
          ? "create trigger fail_link before insert on linked_accounts begin select raise(abort, 'refused'); end"
          : `create or replace function fail_link() returns trigger as $$ begin raise exception 'refused'; end $$ language plpgsql;
             create trigger fail_link before insert on linked_accounts for each row execute function fail_link()`,
      )
      .execute(app.db);
    const failed = await link(MINIKLOON);
    assert.equal(failed.statusCode, 500);
    assert.equal(problems(failed)[0]?.name, 'INTERNAL_ERROR');
    assert.doesNotMatch(failed.body, /refused|linked_accounts/, 'nothing of the database in the answer');
    assert.equal((await get(profile())).statusCode, 404, 'the user it would have created is not there');
  });

  it('holds one primary per user in the database itself', async (t) => {
    const { link, app } = await setup(t);
    await link(MINIKLOON);
    await link(BUILDER);
    await assert.rejects(
      sql`update linked_accounts set is_primary = 1 where uuid = ${BUILDER}`.execute(app.db),
      byKey,
      'a second primary is refused by the partial unique index',
    );
    // Another user who exists, so that the reference to the user holds and only the key can refuse.
    assert.equal((await link(SKYBLOCKER, {}, OTHER)).statusCode, 200);
    await assert.rejects(
      sql`insert into linked_accounts (owner, uuid, snowflake, is_primary, linked_at)
          values (${OWNER}, ${MINIKLOON}, ${OTHER}, 0, 1)`.execute(app.db),
      byKey,
      "an account linked twice in one owner's view is refused by the key",
    );
  });

  it('keeps every invariant under concurrent link, unlink and primary calls for one user', async (t) => {
    const { link, linked, send } = await setup(t, { MESSENGER_MAX_LINKED_ACCOUNTS: '3' });
    const players = [MINIKLOON, BUILDER, SKYBLOCKER, NEVER_JOINED];
    for (let round = 0; round < 4; round++) {
      const calls = players.flatMap((uuid) => [
        link(uuid),
        send('PUT', `${accounts()}/${uuid}/primary`),
        send('DELETE', `${accounts()}/${uuid}`),
        link(uuid, { primary: true }),
      ]);
      const replies = await Promise.all(calls);
      for (const reply of replies) assert.ok([200, 404, 409].includes(reply.statusCode), reply.body);
      const now = await linked();
      assert.ok(now.length <= 3, `at most 3 accounts, had ${now.length}`);
      if (now.length > 0) {
        assert.equal(now.filter((account) => account.is_primary).length, 1, JSON.stringify(now));
        assert.equal(now[0]?.is_primary, true, 'the primary first');
      }
    }
  });

  it('lets exactly one of two users link one account at once', async (t) => {
    const { link, linked, get } = await setup(t);
    for (let round = 0; round < 5; round++) {
      const uuid =
        [MINIKLOON, BUILDER, SKYBLOCKER, NEVER_JOINED, 'fedcba9876543210fedcba9876543210'][round] ?? '';
      const replies = await Promise.all([link(uuid, {}, USER), link(uuid, {}, OTHER)]);
      assert.deepEqual(
        replies.map((reply) => reply.statusCode).sort(),
        [200, 409],
        replies.map((r) => r.body).join(),
      );
    }
    const count = async (user: string) =>
      (await get(profile(user))).statusCode === 404 ? 0 : (await linked(user)).length;
    assert.equal((await count(USER)) + (await count(OTHER)), 5, 'each account linked once');
  });

  it('verifies a link against the Discord account on the Hypixel profile, case-insensitively', async (t) => {
    const { link, linked } = await setup(t);
    const unknownName = await link(MINIKLOON, { verify: true });
    assert.equal(unknownName.statusCode, 409);
    assert.equal(problems(unknownName)[0]?.name, 'USERNAME_UNKNOWN');
    const accepted = await link(MINIKLOON, { verify: true, username: 'minikloon#0001' });
    assert.equal(accepted.statusCode, 200, accepted.body);
    const refused = await link(MINIKLOON, { verify: true, username: 'someone_else' }, OTHER);
    assert.equal(refused.statusCode, 409);
    assert.equal(problems(refused)[0]?.name, 'LINK_NOT_VERIFIED');
    assert.match(problems(refused)[0]?.reason ?? '', /different/);
    // builder_247's profile links "builder_247#2804"; SkyBlocker has no player fixture (never joined).
    assert.equal(
      (await link(BUILDER, { verify: true, username: 'BUILDER_247#2804' }, OTHER)).statusCode,
      200,
    );
    const neverJoined = await link(NEVER_JOINED, { verify: true, username: 'x' }, OTHER);
    assert.equal(neverJoined.statusCode, 409);
    assert.match(problems(neverJoined)[0]?.reason ?? '', /never joined/);
    fake.misbehave({
      answerWith: {
        status: 200,
        body: JSON.stringify({
          success: true,
          player: { uuid: NEVER_JOINED.replace('0', '1'), displayname: 'NoLink' },
        }),
      },
    });
    const missing = await link(NEVER_JOINED.replace('0', '1'), { verify: true, username: 'x' }, OTHER);
    assert.equal(missing.statusCode, 409, missing.body);
    assert.match(problems(missing)[0]?.reason ?? '', /no Discord account linked/);
    assert.equal((await linked(USER)).length, 1);
  });

  it('compares Discord names in ASCII only, and takes a blank or numeric link for none', async (t) => {
    const { link } = await setup(t);
    const profileLinking = (uuid: string, discord: string) => ({
      status: 200,
      body: `{"success":true,"player":{"uuid":"${uuid}","displayname":"X","socialMedia":{"links":{"DISCORD":${discord}}}}}`,
    });
    const cases: [string, string, string, RegExp | undefined][] = [
      ['a Kelvin sign is not a K', '"\\u212Aelvin"', 'kelvin', /different/],
      ['a blank link is none', '"   "', 'x', /no Discord account linked/],
      [
        'a number is no name',
        '12345678901234567890123',
        '12345678901234567890123',
        /no Discord account linked/,
      ],
      ['ASCII case does not matter', '"  KeLvIn "', 'kelvin', undefined],
    ];
    for (const [index, [what, discord, username, refusal]] of cases.entries()) {
      const uuid = `${index}`.padStart(32, 'c');
      fake.misbehave({ answerWith: profileLinking(uuid, discord) });
      const reply = await link(uuid, { verify: true, username }, `12345678901234567${index}`);
      if (refusal) {
        assert.equal(reply.statusCode, 409, `${what}: ${reply.body}`);
        assert.match(problems(reply)[0]?.reason ?? '', refusal, what);
      } else assert.equal(reply.statusCode, 200, `${what}: ${reply.body}`);
    }
  });

  it('answers upstream trouble during verification as endpoint 5 does, and links nothing', async (t) => {
    const { link, get } = await setup(t, { UPSTREAM_RETRIES: '0' });
    fake.misbehave({ failWith: 503 });
    const failed = await link(MINIKLOON, { verify: true, username: 'Minikloon#0001' });
    assert.ok([502, 503].includes(failed.statusCode), failed.body);
    assert.match(problems(failed)[0]?.name ?? '', /^UPSTREAM_/);
    fake.misbehave({ failWith: false, throttle: {} });
    const throttled = await link(BUILDER, { verify: true, username: 'x' });
    assert.equal(throttled.statusCode, 429, throttled.body);
    assert.ok(Number(throttled.headers['retry-after']) >= 1);
    assert.equal((await get(profile())).statusCode, 404, 'no user was created, nothing linked');
  });
});
