import assert from 'node:assert/strict';
import { it, type TestContext } from 'node:test';
import { sql } from 'kysely';
import { migrations } from '../../../src/migrations.js';
import type { Grant } from '../../../src/platform/auth/grants.js';
import { migrateToLatest } from '../../../src/platform/db/migrator.js';
import { describeEachBackend } from '../../helpers/backends.js';
import { buildTestApp } from '../../helpers/build-test-app.js';
import { FIXTURE_PLAYERS } from '../../helpers/fake-upstream.js';
import { json, problemName } from '../../helpers/replies.js';
import { bearer, issueToken } from '../../helpers/tokens.js';

/** The schema a deployment had before users were kept per owner. */
const BEFORE_OWNERS = Object.fromEntries(
  Object.entries(migrations).filter(([name]) => name <= '0008-token-changes'),
);

const WRITER = '111111111111111111';
const SECOND_WRITER = '444444444444444444';
const READER = '555555555555555555';
const U1 = '18446744073709551615';
const U2 = '1234567890123456789';
const MINIKLOON = FIXTURE_PLAYERS.minikloon.uuid;
const BUILDER = FIXTURE_PLAYERS.builder.uuid;
const SKYBLOCKER = FIXTURE_PLAYERS.skyblocker.uuid;

/** The users and accounts of the legacy schema, as its columns hold them. */
const LEGACY_USERS = [
  [U1, 'pt-BR', 'legacy_name', 1000, 2000],
  [U2, 'en-US', null, 1100, 1100],
] as const;
const LEGACY_ACCOUNTS = [
  [MINIKLOON, U1, 1, 1000],
  [BUILDER, U1, 0, 1500],
  [SKYBLOCKER, U2, 1, 1100],
] as const;

/** Rows in one order, whatever order they were made or read in. */
const byText = (one: readonly unknown[], other: readonly unknown[]) =>
  JSON.stringify(one).localeCompare(JSON.stringify(other));

describeEachBackend('messenger users, upgraded in place to one view per owner', (backend) => {
  /**
   * A database at 0008-token-changes holding the legacy users and accounts, and tokens issued to owners with
   * the given grants (space-separated, as stored); then migrated to the latest.
   */
  async function upgraded(t: TestContext, tokens: readonly [owner: string, grants: string][]) {
    const test = await buildTestApp(t, { backend, migrate: false });
    const db = test.app.db;
    await migrateToLatest(db, BEFORE_OWNERS);
    for (const [index, [owner, grants]] of tokens.entries()) {
      await sql`insert into tokens (jti, owner, grants, chain_id, issued_at, expires_at, revoked_at)
        values (${`jti-${index}`}, ${owner}, ${grants}, ${`chain-${index}`}, 1, 2, ${index % 2 === 0 ? null : 3})`.execute(
        db,
      );
    }
    for (const [snowflake, locale, username, created, updated] of LEGACY_USERS) {
      await sql`insert into messenger_users (snowflake, locale, username, created_at, updated_at)
        values (${snowflake}, ${locale}, ${username}, ${created}, ${updated})`.execute(db);
    }
    for (const [uuid, snowflake, primary, linkedAt] of LEGACY_ACCOUNTS) {
      await sql`insert into linked_accounts (uuid, snowflake, is_primary, linked_at)
        values (${uuid}, ${snowflake}, ${primary}, ${linkedAt})`.execute(db);
    }
    await migrateToLatest(db, migrations);

    const rows = async () => ({
      users: (
        await sql<{
          owner: string;
          snowflake: string;
          locale: string;
          username: string | null;
          created_at: number;
          updated_at: number;
        }>`select * from messenger_users order by owner, snowflake`.execute(db)
      ).rows
        .map((row) => [
          row.owner,
          row.snowflake,
          row.locale,
          row.username,
          Number(row.created_at),
          Number(row.updated_at),
        ])
        .sort(byText),
      accounts: (
        await sql<{ owner: string; uuid: string; snowflake: string; is_primary: number; linked_at: number }>`
          select * from linked_accounts order by owner, linked_at`.execute(db)
      ).rows
        .map((row) => [row.owner, row.uuid, row.snowflake, Number(row.is_primary), Number(row.linked_at)])
        .sort(byText),
    });
    const tokenOf = (owner: string, grants: readonly Grant[]) =>
      issueToken(test.app, test.config, { owner: BigInt(owner), grants });
    const call = (token: string, method: 'GET' | 'DELETE' | 'PUT', url: string) =>
      test.app.inject({ method, url, headers: bearer(token) });
    return { ...test, rows, tokenOf, call };
  }

  /** The legacy rows as an owner's view holds them after the upgrade. */
  const viewOf = (owner: string) => ({
    users: LEGACY_USERS.map((user) => [owner, ...user]).sort(byText),
    accounts: LEGACY_ACCOUNTS.map(([uuid, snowflake, primary, linkedAt]) => [
      owner,
      uuid,
      snowflake,
      primary,
      linkedAt,
    ]).sort(byText),
  });
  const merged = (...views: ReturnType<typeof viewOf>[]) => ({
    users: views.flatMap((view) => view.users).sort(byText),
    accounts: views.flatMap((view) => view.accounts).sort(byText),
  });
  const legacyProfile = {
    user_profile: { snowflake: U1, locale: 'pt-BR' },
    linked_accounts: [
      { id: MINIKLOON, snowflake: U1, is_primary: true },
      { id: BUILDER, snowflake: U1, is_primary: false },
    ],
  };

  it('gives everything to the one owner that held messenger:write, and it keeps working', async (t) => {
    const { rows, tokenOf, call, app } = await upgraded(t, [
      [WRITER, 'player:read messenger:write'],
      [READER, 'messenger:read messenger:log'],
      [WRITER, 'messenger:write messenger:read'],
    ]);
    assert.deepEqual(await rows(), viewOf(WRITER));

    const writer = await tokenOf(WRITER, ['messenger:read', 'messenger:write']);
    const shown = await call(writer, 'GET', `/messenger/user/${U1}/profile`);
    assert.equal(shown.statusCode, 200, shown.body);
    assert.deepEqual(json(shown), legacyProfile, 'the view it had before the upgrade');
    const reader = await tokenOf(READER, ['messenger:read']);
    assert.equal(
      problemName(await call(reader, 'GET', `/messenger/user/${U1}/profile`)),
      'MESSENGER_USER_NOT_FOUND',
    );

    // The invariants hold on the upgraded tables: the oldest remaining is promoted, one primary per user.
    const unlinked = await call(writer, 'DELETE', `/messenger/user/${U1}/accounts/${MINIKLOON}`);
    assert.equal(unlinked.statusCode, 200, unlinked.body);
    assert.deepEqual(json(unlinked).linked_accounts, [{ id: BUILDER, snowflake: U1, is_primary: true }]);
    await assert.rejects(
      sql`insert into linked_accounts (owner, uuid, snowflake, is_primary, linked_at)
          values (${WRITER}, ${MINIKLOON}, ${U2}, 1, 3000)`.execute(app.db),
      'a second primary for U2 in the writer’s view is refused by the partial unique index',
    );
    await sql`insert into linked_accounts (owner, uuid, snowflake, is_primary, linked_at)
      values (${WRITER}, ${MINIKLOON}, ${U2}, 0, 3000)`.execute(app.db);
    await assert.rejects(
      sql`insert into linked_accounts (owner, uuid, snowflake, is_primary, linked_at)
          values (${WRITER}, ${MINIKLOON}, ${U1}, 0, 3000)`.execute(app.db),
      'an account twice in the writer’s view is refused by the key',
    );
    await assert.rejects(
      sql`insert into linked_accounts (owner, uuid, snowflake, is_primary, linked_at)
          values (${READER}, ${MINIKLOON}, ${U1}, 0, 3000)`.execute(app.db),
      'an account of a user the owner’s view lacks is refused by the reference',
    );
  });

  it('gives each owner that held messenger:write a copy: each keeps its view, and they part from there', async (t) => {
    const { rows, tokenOf, call } = await upgraded(t, [
      [WRITER, 'messenger:write'],
      [SECOND_WRITER, 'messenger:read messenger:write messenger:log'],
      [READER, 'messenger:read'],
    ]);
    assert.deepEqual(await rows(), merged(viewOf(WRITER), viewOf(SECOND_WRITER)));

    const first = await tokenOf(WRITER, ['messenger:read', 'messenger:write']);
    const second = await tokenOf(SECOND_WRITER, ['messenger:read', 'messenger:write']);
    for (const token of [first, second])
      assert.deepEqual(json(await call(token, 'GET', `/messenger/user/${U1}/profile`)), legacyProfile);
    assert.equal(
      (await call(first, 'PUT', `/messenger/user/${U1}/accounts/${BUILDER}/primary`)).statusCode,
      200,
    );
    assert.deepEqual(
      json(await call(second, 'GET', `/messenger/user/${U1}/profile`)),
      legacyProfile,
      "one owner's change leaves the other's copy as it was",
    );
  });

  it('keeps the rows under owner 0, for an auditor only, when no owner held messenger:write', async (t) => {
    const { rows, tokenOf, call } = await upgraded(t, [[READER, 'messenger:read messenger:log']]);
    assert.deepEqual(await rows(), viewOf('0'));

    const auditor = await tokenOf('666666666666666666', ['messenger:read', 'messenger:audit']);
    const kept = await call(auditor, 'GET', `/messenger/user/${U1}/profile?owner=0`);
    assert.equal(kept.statusCode, 200, kept.body);
    assert.deepEqual(json(kept), legacyProfile);
    assert.equal((await call(auditor, 'GET', `/messenger/user/${U1}/profile`)).statusCode, 404);
    const reader = await tokenOf(READER, ['messenger:read']);
    assert.equal((await call(reader, 'GET', `/messenger/user/${U1}/profile`)).statusCode, 404);
    assert.equal((await call(reader, 'GET', `/messenger/user/${U1}/profile?owner=0`)).statusCode, 403);
  });
});
