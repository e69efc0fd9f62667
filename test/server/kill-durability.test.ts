import assert from 'node:assert/strict';
import { it } from 'node:test';
import { sql } from 'kysely';
import { describeOrSkip } from '../helpers/backends.js';
import { allDialects, skipOn } from '../helpers/environment.js';
import { serviceOnFreshDatabase, startServiceProcess } from '../helpers/service-process.js';

const WRITERS = 32;
/** The burst is cut (SIGKILL) once this many logs have been acknowledged. */
const ACKNOWLEDGED_BEFORE_KILL = 400;
/** A burst that has not reached its acknowledgements by then is cut anyway, and the test fails. */
const BURST_DEADLINE_MS = 60_000;

/** A log whose user ID is its number in the burst, so the database says which logs it holds. */
const logBody = (user: number) =>
  JSON.stringify({
    interaction: {
      interaction_name: 'stats',
      interaction_token: `burst-token-${user}-${Math.random()}`,
      interaction_type: 'APPLICATION_COMMAND',
      user_id: String(user),
    },
    user: { user_id: String(user), username: `user${user}` },
  });

for (const dialect of allDialects) {
  describeOrSkip(
    `SIGKILL during a burst of interaction logs on ${dialect}`,
    { skip: skipOn(dialect) },
    () => {
      it('loses no log that was answered 200', async (t) => {
        const { service, exited, db, tokens, env } = await serviceOnFreshDatabase(t, dialect, 'src/main.ts', {
          DATA_DIR: '/nonexistent-unused',
        });
        if (dialect === 'sqlite') {
          // A killed process loses nothing in WAL mode even with synchronous=NORMAL; a power cut does. The
          // service opens its database as createDatabase does: check that a commit is synced (FULL = 2).
          const { rows } = await sql<{ synchronous: number }>`pragma synchronous`.execute(db);
          assert.deepEqual(rows, [{ synchronous: 2 }]);
          const mode = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(db);
          assert.deepEqual(mode.rows, [{ journal_mode: 'wal' }]);
        }
        const { token } = await tokens.issue(42n, ['messenger:log']);

        const acknowledged: number[] = [];
        let next = 1;
        let killed = false;
        const deadline = setTimeout(() => {
          killed = true;
          service.child.kill('SIGKILL');
        }, BURST_DEADLINE_MS);
        t.after(() => clearTimeout(deadline));
        const writer = async () => {
          while (!killed) {
            const user = next++;
            const reply = await fetch(`${service.url}/messenger/logging/interaction`, {
              method: 'POST',
              headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
              body: logBody(user),
            }).catch(() => undefined);
            if (!reply) return; // the connection died with the process
            const body = await reply.text().catch(() => undefined);
            if (reply.status === 200 && body !== undefined) acknowledged.push(user);
            if (acknowledged.length >= ACKNOWLEDGED_BEFORE_KILL && !killed) {
              killed = true;
              service.child.kill('SIGKILL');
            }
          }
        };
        await Promise.all(Array.from({ length: WRITERS }, writer));
        const [, signal] = await exited;
        assert.equal(signal, 'SIGKILL');
        const sent = next - 1;
        assert.ok(
          acknowledged.length >= ACKNOWLEDGED_BEFORE_KILL,
          `only ${acknowledged.length} of ${next - 1} logs acknowledged before the deadline`,
        );

        // A restarted service opens the database the killed one left (SQLite recovers its WAL).
        const restarted = await startServiceProcess('src/main.ts', env);
        t.after(() => restarted.child.kill('SIGKILL'));
        const stored = new Set(
          (await sql<{ user_id: string }>`select user_id from interaction_logs`.execute(db)).rows.map((row) =>
            Number(row.user_id),
          ),
        );
        const lost = acknowledged.filter((user) => !stored.has(user));
        assert.deepEqual(lost, [], `${lost.length} of ${acknowledged.length} acknowledged logs lost`);
        assert.ok(stored.size <= sent, 'nothing stored that was not sent');
        t.diagnostic(`${acknowledged.length} acknowledged, ${stored.size} stored, ${sent} sent`);
      });
    },
  );
}
