import assert from 'node:assert/strict';
import { it } from 'node:test';
import { sql } from 'kysely';
import type { Grant } from '../../../src/platform/auth/grants.js';
import { describeEachBackend } from '../../helpers/backends.js';
import { json, problemName, problems, type Reply } from '../../helpers/replies.js';
import { issueToken } from '../../helpers/tokens.js';
import { BOT_OWNER, logText, SERVER, setup, USER } from './interaction-logs.js';

/** Two developers' bots (each logs and reads) and an operator's auditor. */
const A = 111111111111111111n;
const B = 222222222222222222n;
const AUDITOR = 333333333333333333n;
const BOT: readonly Grant[] = ['messenger:log', 'messenger:read'];
const OTHER_USER = '223456789012345678';

type Listed = {
  id: string;
  /** The owner's exact digits (JSON.parse would round the integer). */
  owner: string;
  user: { user_id: number; username: string };
  server?: { server_name?: string };
};

describeEachBackend('interaction logs, one owner’s logs each', (backend) => {
  async function owners(t: Parameters<typeof setup>[0], env: Record<string, string> = {}) {
    const test = await setup(t, backend, env);
    const token = (owner: bigint, grants: readonly Grant[]) =>
      issueToken(test.app, test.config, { owner, grants });
    const botOf = (token: string) => ({
      log: (options: Parameters<typeof logText>[0] = {}) => test.post(logText(options), token),
      post: (text: string) => test.post(text, token),
      list: (query = '') => test.list(query, token),
      /** Every log this token lists, page by page. */
      async all(query = ''): Promise<Listed[]> {
        const seen: Listed[] = [];
        let cursor: string | null = null;
        do {
          const reply = await test.list(`limit=2${query}${cursor ? `&cursor=${cursor}` : ''}`, token);
          assert.equal(reply.statusCode, 200, reply.body);
          seen.push(...listed(reply));
          cursor = json(reply).next_cursor;
        } while (cursor);
        return seen;
      },
    });
    const a = botOf(await token(A, BOT));
    const b = botOf(await token(B, BOT));
    const auditor = botOf(await token(AUDITOR, ['messenger:read', 'messenger:audit']));
    /** The names an owner's logs gave users and servers, as kept. */
    const kept = async (owner: bigint) => ({
      users: (
        await sql<{ user_id: string; username: string }>`
          select user_id, username from interaction_users where owner = ${`${owner}`} order by user_id`.execute(
          test.app.db,
        )
      ).rows.map((row) => [row.user_id, row.username]),
      servers: (
        await sql<{ server_id: string; server_name: string | null }>`
          select server_id, server_name from interaction_servers where owner = ${`${owner}`}
          order by server_id`.execute(test.app.db)
      ).rows.map((row) => [row.server_id, row.server_name]),
    });
    return { ...test, a, b, auditor, kept };
  }

  /** A page's logs, each with its owner's exact digits, read from the text. */
  const listed = (reply: Reply): Listed[] => {
    const owners = [...reply.body.matchAll(/"owner":(\d+)/g)].map((match) => match[1]);
    return json(reply).data.map((log: Listed, index: number) => ({ ...log, owner: owners[index] }));
  };
  const ok = (reply: Reply) => assert.equal(reply.statusCode, 200, reply.body);
  const owned = (logs: readonly Listed[]) => [...new Set(logs.map((log) => log.owner))].sort();

  it("lists only the caller's own logs, whatever it filters by", async (t) => {
    const { a, b } = await owners(t);
    for (let index = 0; index < 3; index++) ok(await b.log({ username: `b_name_${index}` }));
    ok(await b.log({ user: OTHER_USER, username: 'b_other' }));
    ok(await a.log({ username: 'a_name' }));

    const mine = await a.all();
    assert.equal(mine.length, 1);
    assert.deepEqual(owned(mine), [`${A}`]);
    for (const query of [
      `&user_id=${USER}`,
      `&server_id=${SERVER}`,
      `&user_id=${OTHER_USER}`,
      `&owner=${A}`,
    ]) {
      const listed = await a.all(query);
      assert.deepEqual(owned(listed), listed.length === 0 ? [] : [`${A}`], query);
      assert.ok(!JSON.stringify(listed).includes('b_'), `${query}: nothing of B's`);
    }
    assert.equal((await a.all(`&user_id=${OTHER_USER}`)).length, 0, "B's other user is not A's");
    assert.equal((await b.all()).length, 4);
    assert.deepEqual(owned(await b.all()), [`${B}`]);
  });

  it('answers 403 NOT_RESOURCE_OWNER to a non-auditor naming another owner, showing nothing', async (t) => {
    const { a, b, post, list } = await owners(t);
    ok(await b.log({ username: 'b_secret' }));
    for (const owner of [B, BOT_OWNER, AUDITOR, 0n]) {
      const reply = await a.list(`owner=${owner}`);
      assert.equal(reply.statusCode, 403, reply.body);
      assert.equal(problemName(reply), 'NOT_RESOURCE_OWNER');
      assert.match(String(reply.headers['www-authenticate']), /insufficient_scope.*messenger:audit/);
      assert.doesNotMatch(reply.body, /b_secret/);
    }
    ok(await a.list(`owner=${A}`));
    for (const owner of ['abc', '-1', '00', '18446744073709551616', '']) {
      const reply = await a.list(`owner=${owner}`);
      assert.equal(reply.statusCode, 400, `${owner}: ${reply.body}`);
      assert.match(problems(reply)[0]?.developer_reason ?? '', /^query\/owner must be an owner/);
    }
    // The suite's bot and its owner's reader: the reader lists the bot's log, and nothing of B's.
    ok(await post(logText({ username: 'bot_name' })));
    const theirs = await list();
    ok(theirs);
    assert.deepEqual(
      listed(theirs).map((log) => [log.owner, log.user.username]),
      [[`${BOT_OWNER}`, 'bot_name']],
    );
    assert.equal(json(await a.list()).data.length, 0, 'A has logged nothing');
  });

  it("lets an auditor list every owner's logs, or one owner's", async (t) => {
    const { a, b, auditor } = await owners(t);
    ok(await a.log({ username: 'a_name' }));
    ok(await b.log({ username: 'b_name' }));
    ok(await b.log({ username: 'b_name', server: null }));
    const everyone = await auditor.all();
    assert.equal(everyone.length, 3);
    assert.deepEqual(owned(everyone), [`${A}`, `${B}`]);
    assert.deepEqual(owned(await auditor.all(`&owner=${B}`)), [`${B}`]);
    assert.equal((await auditor.all(`&owner=${B}`)).length, 2);
    assert.equal((await auditor.all(`&owner=${B}&server_id=${SERVER}`)).length, 1);
    assert.equal((await auditor.all(`&owner=${A}&user_id=${USER}`)).length, 1);
    assert.equal((await auditor.all(`&user_id=${USER}`)).length, 3, 'a filter across owners');
    assert.equal((await auditor.all('&owner=0')).length, 0);
    assert.equal((await auditor.all(`&owner=${AUDITOR}`)).length, 0, 'its own: none');
  });

  it('keeps the names each owner gave: A logging B’s user and server renames nothing of B’s', async (t) => {
    const { a, b, kept } = await owners(t);
    ok(await b.log({ username: 'notch' }));
    const before = { kept: await kept(B), logs: await b.all() };
    assert.deepEqual(before.kept, { users: [[USER, 'notch']], servers: [[SERVER, 'Guild']] });

    const renamed = logText({ username: 'renamed_by_a' }).replace('"Guild"', '"Stolen Guild"');
    ok(await a.post(renamed));
    ok(await a.log({ username: 'renamed_again', server: null }));
    assert.deepEqual({ kept: await kept(B), logs: await b.all() }, before, "B's names and logs as they were");
    assert.deepEqual(await kept(A), {
      users: [[USER, 'renamed_again']],
      servers: [[SERVER, 'Stolen Guild']],
    });
  });

  it('keeps each owner’s name when A and B log one user under different names at once', async (t) => {
    // A linger puts concurrent logs in one batch (one statement on PostgreSQL); without, in several.
    for (const env of [{ GROUP_COMMIT_LINGER_MS: '200' }, {}] as Record<string, string>[]) {
      const { a, b, kept } = await owners(t, env);
      for (let round = 0; round < 5; round++) {
        const replies = await Promise.all([
          a.log({ username: `a_${round}` }),
          b.log({ username: `b_${round}` }),
          a.log({ user: OTHER_USER, username: `a_other_${round}` }),
          b.log({ user: OTHER_USER, username: `b_other_${round}`, server: null }),
        ]);
        for (const reply of replies) ok(reply);
        assert.deepEqual(await kept(A), {
          users: [
            [USER, `a_${round}`],
            [OTHER_USER, `a_other_${round}`],
          ].sort(),
          servers: [[SERVER, 'Guild']],
        });
        assert.deepEqual(await kept(B), {
          users: [
            [USER, `b_${round}`],
            [OTHER_USER, `b_other_${round}`],
          ].sort(),
          servers: [[SERVER, 'Guild']],
        });
      }
      assert.equal((await a.all()).length, 10);
      assert.equal((await b.all()).length, 10);
    }
  });
});
