import assert from 'node:assert/strict';
import { it, type TestContext } from 'node:test';
import { sql } from 'kysely';
import { migrations } from '../../../src/migrations.js';
import type { Grant } from '../../../src/platform/auth/grants.js';
import { migrateToLatest } from '../../../src/platform/db/migrator.js';
import { describeEachBackend } from '../../helpers/backends.js';
import { buildTestApp } from '../../helpers/build-test-app.js';
import { json } from '../../helpers/replies.js';
import { bearer, issueToken } from '../../helpers/tokens.js';

/** The schema a deployment had before interaction users and servers were kept per owner. */
const BEFORE_OWNERS = Object.fromEntries(
  Object.entries(migrations).filter(([name]) => name <= '0008-token-changes'),
);

/** O1 logged and held messenger:log; O2 logged, but its tokens are gone; L2 held messenger:log only. */
const O1 = '111111111111111111';
const O2 = '444444444444444444';
const L2 = '555555555555555555';
const READER = '666666666666666666';
const U = '18446744073709551615';
const U2 = '1234567890123456789';
const GONE_USER = '223456789012345678';
const S = '9223372036854775808';
const S2 = '323456789012345678';
const GONE_SERVER = '423456789012345678';

/**
 * A legacy log: its row, with the document as the service wrote it (IDs as integer digits). Its options,
 * free-form, hold `\u0000` and a lone surrogate, escaped as the service writes them, which PostgreSQL's
 * `jsonb` refuses, and an escaped backslash before "u0000", which is no such escape.
 */
function logRow(
  index: number,
  owner: string,
  at: number,
  user: string,
  username: string,
  server?: { id: string; name?: string; object: boolean },
) {
  const serverId = server ? `,"server_id":${server.id}` : '';
  const serverObject =
    server?.object === true
      ? `,"server":{"server_id":${server.id}${server.name === undefined ? '' : `,"server_name":${JSON.stringify(server.name)}`}}`
      : '';
  const document =
    `{"interaction":{"interaction_name":"stats","interaction_type":"APPLICATION_COMMAND",` +
    `"options":{"big":"18446744073709551615","n":[1,{"deep":true}],"nul":"\\u0000","half":"\\udbff","not_nul":"\\\\u0000"}${serverId},"user_id":${user}}` +
    `${serverObject},"user":{"user_id":${user},"username":${username}}}`;
  return {
    id: `00000000-0000-7000-8000-${String(index).padStart(12, '0')}`,
    fingerprint: `fingerprint-${index}`,
    received_at: at,
    owner,
    user_id: user,
    server_id: server?.id ?? null,
    document,
  };
}

const LOGS = [
  logRow(1, O1, 1000, U, '"old"', { id: S, name: 'Guild', object: true }),
  // The server given by ID only: its name stays the one given before.
  logRow(2, O1, 2000, U, '"n\\u00e9w"', { id: S, object: false }),
  logRow(3, O2, 1500, U, '"theirs"', { id: S, name: 'Their Guild', object: true }),
  // The same time as the one before: the later id is the later log.
  logRow(4, O2, 1500, U, '"theirs"', { id: S, name: 'Tie Guild', object: true }),
  logRow(5, O2, 1600, U, '"theirs_later"', { id: S2, object: true }),
  // A backslash before "u0000" in a name: no escape of U+0000, kept as it is.
  logRow(6, O1, 1800, U2, '"sec\\\\u0000ond"'),
];

describeEachBackend('interaction users and servers, upgraded in place to one per owner', (backend) => {
  /**
   * A database at 0008-token-changes holding legacy logs, users and servers, and tokens issued to owners
   * with the given grants (space-separated, as stored); then migrated to the latest.
   */
  async function upgraded(t: TestContext, tokens: readonly [owner: string, grants: string][]) {
    const test = await buildTestApp(t, { backend, migrate: false });
    const db = test.app.db;
    await migrateToLatest(db, BEFORE_OWNERS);
    for (const [index, [owner, grants]] of tokens.entries()) {
      await sql`insert into tokens (jti, owner, grants, chain_id, issued_at, expires_at)
        values (${`jti-${index}`}, ${owner}, ${grants}, ${`chain-${index}`}, 1, 2)`.execute(db);
    }
    for (const log of LOGS) {
      await sql`insert into interaction_logs (id, fingerprint, received_at, owner, user_id, server_id, document)
        values (${log.id}, ${log.fingerprint}, ${log.received_at}, ${log.owner}, ${log.user_id},
          ${log.server_id}, ${log.document})`.execute(db);
    }
    // As the legacy service kept them: one row per ID, the latest names any owner's logs gave; and a user
    // and a server whose logs retention deleted since.
    for (const [user, username, first, last] of [
      [U, 'theirs_later', 1000, 2000],
      [U2, 'second', 1800, 1800],
      [GONE_USER, 'gone', 10, 20],
    ] as const) {
      await sql`insert into interaction_users (user_id, username, first_seen_at, last_seen_at)
        values (${user}, ${username}, ${first}, ${last})`.execute(db);
    }
    for (const [server, name, first, last] of [
      [S, 'Tie Guild', 1000, 2000],
      [S2, null, 1600, 1600],
      [GONE_SERVER, 'Gone Guild', 10, 20],
    ] as const) {
      await sql`insert into interaction_servers (server_id, server_name, first_seen_at, last_seen_at)
        values (${server}, ${name}, ${first}, ${last})`.execute(db);
    }
    await migrateToLatest(db, migrations);

    const rows = async () => ({
      users: (
        await sql<{
          owner: string;
          user_id: string;
          username: string;
          first_seen_at: number;
          last_seen_at: number;
        }>`
          select * from interaction_users`.execute(db)
      ).rows
        .map((row) => [
          row.owner,
          row.user_id,
          row.username,
          Number(row.first_seen_at),
          Number(row.last_seen_at),
        ])
        .sort(byText),
      servers: (
        await sql<{
          owner: string;
          server_id: string;
          server_name: string | null;
          first_seen_at: number;
          last_seen_at: number;
        }>`select * from interaction_servers`.execute(db)
      ).rows
        .map((row) => [
          row.owner,
          row.server_id,
          row.server_name,
          Number(row.first_seen_at),
          Number(row.last_seen_at),
        ])
        .sort(byText),
      logs: (
        await sql<{
          id: string;
          document: string;
        }>`select id, document from interaction_logs order by id`.execute(db)
      ).rows.map((row) => [row.id, row.document]),
    });
    const tokenOf = (owner: string, grants: readonly Grant[]) =>
      issueToken(test.app, test.config, { owner: BigInt(owner), grants });
    const get = (token: string, url: string) =>
      test.app.inject({ method: 'GET', url, headers: bearer(token) });
    const indexes = async () =>
      (backend.dialect === 'sqlite'
        ? await sql<{ name: string }>`select name from sqlite_master
            where type = 'index' and tbl_name = 'interaction_logs' and sql is not null`.execute(db)
        : await sql<{ name: string }>`select indexname as name from pg_indexes
            where schemaname = current_schema() and tablename = 'interaction_logs'
            and indexname <> 'interaction_logs_pkey' and indexdef not like '%(fingerprint)%'`.execute(db)
      ).rows
        .map((row) => row.name)
        .sort();
    return { ...test, rows, tokenOf, get, indexes };
  }

  /** Each logging owner's own, rebuilt from its logs. */
  const fromLogs = {
    users: [
      [O1, U, 'néw', 1000, 2000],
      [O1, U2, 'sec\\u0000ond', 1800, 1800],
      [O2, U, 'theirs_later', 1500, 1600],
    ],
    servers: [
      [O1, S, 'Guild', 1000, 2000],
      [O2, S, 'Tie Guild', 1500, 1500],
      [O2, S2, null, 1600, 1600],
    ],
  };
  /** The legacy shared rows, by ID: what a messenger:log holder keeps of an ID its own logs do not name. */
  const legacy = {
    users: [
      [U, 'theirs_later', 1000, 2000],
      [U2, 'second', 1800, 1800],
      [GONE_USER, 'gone', 10, 20],
    ],
    servers: [
      [S, 'Tie Guild', 1000, 2000],
      [S2, null, 1600, 1600],
      [GONE_SERVER, 'Gone Guild', 10, 20],
    ],
  } as const;
  const keptBy = (owner: string, kind: 'users' | 'servers') =>
    legacy[kind]
      .filter(([id]) => !fromLogs[kind].some((row) => row[0] === owner && row[1] === id))
      .map((row) => [owner, ...row]);
  const expected = (...holders: string[]) => ({
    users: [...fromLogs.users, ...holders.flatMap((owner) => keptBy(owner, 'users'))].sort(byText),
    servers: [...fromLogs.servers, ...holders.flatMap((owner) => keptBy(owner, 'servers'))].sort(byText),
    logs: LOGS.map((log) => [log.id, log.document]),
  });

  it("rebuilds each owner's users and servers from its logs; each messenger:log holder keeps the shared rows its logs do not name", async (t) => {
    const { rows, tokenOf, get, indexes } = await upgraded(t, [
      [O1, 'messenger:log messenger:read'],
      [L2, 'player:read messenger:log'],
      [READER, 'messenger:read messenger:write'],
    ]);
    assert.deepEqual(await rows(), expected(O1, L2));
    assert.deepEqual(await indexes(), [
      'interaction_logs_newest',
      'interaction_logs_owner_newest',
      'interaction_logs_owner_server_newest',
      'interaction_logs_owner_user_newest',
    ]);

    // Each owner reads its own logs, and knows the users its logs (or the legacy rows given it) named.
    const first = await tokenOf(O1, ['messenger:read']);
    const second = await tokenOf(O2, ['messenger:read']);
    const listed = await get(first, '/messenger/logging/interaction');
    assert.equal(listed.statusCode, 200, listed.body);
    assert.deepEqual(
      json(listed).data.map((log: { id: string }) => log.id),
      LOGS.filter((log) => log.owner === O1)
        .sort((one, other) => other.received_at - one.received_at)
        .map((log) => log.id),
    );
    assert.equal(json(await get(second, `/messenger/logging/interaction?user_id=${U}`)).data.length, 3);
    const known = async (token: string, user: string) =>
      (await get(token, `/messenger/user/${user}/profile`)).statusCode;
    assert.equal(await known(first, U2), 200);
    assert.equal(await known(second, U2), 404, "O1's user only");
    const holder = await tokenOf(L2, ['messenger:read']);
    assert.equal(await known(holder, GONE_USER), 200);
    assert.equal(await known(holder, U), 200, 'a holder keeps what the shared table showed it');
    assert.equal(await known(await tokenOf(READER, ['messenger:read']), GONE_USER), 404);
  });

  it('keeps what no log names under owner 0 when no owner held messenger:log', async (t) => {
    const { rows } = await upgraded(t, [[READER, 'messenger:read messenger:write']]);
    assert.deepEqual(await rows(), expected('0'));
  });
});

/** Rows in one order, whatever order they were made or read in. */
const byText = (one: readonly unknown[], other: readonly unknown[]) =>
  JSON.stringify(one).localeCompare(JSON.stringify(other));
