import assert from 'node:assert/strict';
import { it } from 'node:test';
import { sql } from 'kysely';
import type { Database } from '../../src/platform/db/database.js';
import { describeOrSkip } from '../helpers/backends.js';
import { allDialects, skipOn } from '../helpers/environment.js';
import { serviceOnFreshDatabase, startServiceProcess } from '../helpers/service-process.js';

/*
 * SIGKILL in the middle of a burst of ping batches (POST /ping/{player}, group-committed): every batch that
 * was answered 200 must be in the database after the crash, whole, with the per-day aggregates that the
 * history is read from agreeing with the raw samples; and a restarted service serves exactly that.
 */

const WRITERS = 16;
const SAMPLES_PER_BATCH = 25;
/** The burst is cut (SIGKILL) once this many batches have been acknowledged. */
const ACKNOWLEDGED_BEFORE_KILL = 150;
/** A burst that has not reached its acknowledgements by then is cut anyway, and the test fails. */
const BURST_DEADLINE_MS = 60_000;
/** Several players, so that batches of different players share transactions and lock different days. */
const PLAYERS = [
  '20934ef9488c465180a78f861586b4cf',
  'ef962ec2df6e48a2ac9d6062c1b84652',
  'ec1811e6822b4843bcd4fef82f75deb7',
  'c33ccb93a7d7488e922216a84518d25d',
];
/**
 * Every value kept in the history, so that the restarted service's answer can be compared with the raw
 * samples one for one (the cap is applied as samples are written, so both processes need it).
 */
const ENV = { PING_HISTORY_PER_DAY: '100000', DATA_DIR: '/nonexistent-unused' };

/** Batch `n`: its samples' lobby names it, so the database says which batches it holds. */
const batchOf = (n: number) => ({
  player: PLAYERS[n % PLAYERS.length] as string,
  body: JSON.stringify({
    samples: Array.from({ length: SAMPLES_PER_BATCH }, (_, index) => ({
      ping: (n * 31 + index) % 1000,
      lobby: `batch_${n}`,
    })),
  }),
});

interface Burst {
  readonly acknowledged: number[];
  readonly sent: number;
}

/**
 * Writers post batches until their connection dies with the process, telling `onAcknowledged` the count
 * after each 200; the batches answered 200. A writer never stops by itself: had it stopped once the kill
 * was asked for, the answers already on their way could have acknowledged every batch sent, and the kill
 * would have cut nothing.
 */
async function burst(url: string, token: string, onAcknowledged: (count: number) => void): Promise<Burst> {
  const acknowledged: number[] = [];
  let next = 1;
  const writer = async () => {
    for (;;) {
      const n = next++;
      const { player, body } = batchOf(n);
      const reply = await fetch(`${url}/ping/${player}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body,
      }).catch(() => undefined);
      if (!reply) return; // the connection died with the process
      // A 200 counts only once its whole body arrived: that is the acknowledgement a client acts on.
      const text = await reply.text().catch(() => undefined);
      if (reply.status === 200 && text !== undefined) {
        acknowledged.push(n);
        onAcknowledged(acknowledged.length);
      }
    }
  };
  await Promise.all(Array.from({ length: WRITERS }, writer));
  return { acknowledged, sent: next - 1 };
}

/** The batches stored (by lobby), with how many of their samples are there. */
async function storedBatches(db: Database): Promise<Map<number, number>> {
  const { rows } = await sql<{ lobby: string; samples: number | string }>`
    select lobby, count(*) as samples from ping_samples group by lobby`.execute(db);
  return new Map(rows.map((row) => [Number(row.lobby.slice('batch_'.length)), Number(row.samples)]));
}

/** Per player: the raw samples' ping values (sorted), and what the day aggregates count. */
async function perPlayer(db: Database, player: string) {
  const raw = await sql<{ ping: number }>`
    select ping from ping_samples where player = ${player} order by ping`.execute(db);
  const days = await sql<{ samples: number | string }>`
    select coalesce(sum(samples), 0) as samples from ping_days where player = ${player}`.execute(db);
  return { pings: raw.rows.map((row) => row.ping), counted: Number(days.rows[0]?.samples) };
}

for (const dialect of allDialects) {
  describeOrSkip(`SIGKILL during a burst of ping batches on ${dialect}`, { skip: skipOn(dialect) }, () => {
    it('loses no batch that was answered 200, stores none in part, and the restarted service serves them', async (t) => {
      const { service, exited, db, tokens, env } = await serviceOnFreshDatabase(
        t,
        dialect,
        'src/main.ts',
        ENV,
      );
      const token = (await tokens.issue(42n, ['ping:write', 'ping:read'])).token;

      const kill = () => service.child.kill('SIGKILL');
      const deadline = setTimeout(kill, BURST_DEADLINE_MS);
      t.after(() => clearTimeout(deadline));
      const { acknowledged, sent } = await burst(service.url, token, (count) => {
        if (count >= ACKNOWLEDGED_BEFORE_KILL) kill();
      });
      const [, signal] = await exited;
      assert.equal(signal, 'SIGKILL');
      assert.ok(sent > acknowledged.length, 'the kill cut batches in flight');
      assert.ok(
        acknowledged.length >= ACKNOWLEDGED_BEFORE_KILL,
        `only ${acknowledged.length} of ${sent} batches acknowledged before the deadline`,
      );

      // A restarted service opens the database the killed one left (SQLite recovers its WAL).
      const restarted = await startServiceProcess('src/main.ts', env);
      t.after(() => restarted.child.kill('SIGKILL'));
      const stored = await storedBatches(db);
      const lost = acknowledged.filter((n) => !stored.has(n));
      assert.deepEqual(lost, [], `${lost.length} of ${acknowledged.length} acknowledged batches lost`);
      for (const [n, samples] of stored) {
        assert.ok(n >= 1 && n <= sent, `batch ${n} stored but never sent`);
        assert.equal(samples, SAMPLES_PER_BATCH, `batch ${n} stored in part`);
      }

      for (const player of PLAYERS) {
        const { pings, counted } = await perPlayer(db, player);
        assert.equal(counted, pings.length, `${player}: the days count what the raw samples hold`);
        const reply = await fetch(`${restarted.url}/ping/${player}`, {
          headers: { authorization: `Bearer ${token}` },
        });
        assert.equal(reply.status, 200);
        const { data } = (await reply.json()) as { data: { history: number[] }[] };
        const served = data.flatMap((day) => day.history).sort((a, b) => a - b);
        assert.deepEqual(served, pings, `${player}: the restarted service serves every stored sample`);
      }
      t.diagnostic(`${acknowledged.length} batches acknowledged, ${stored.size} stored, ${sent} sent`);
    });
  });
}
