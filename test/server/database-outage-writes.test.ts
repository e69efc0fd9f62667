import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { describeOrSkip } from '../helpers/backends.js';
import { buildTestApp, deferClose, type TestApp } from '../helpers/build-test-app.js';
import { allCaches, skipOn, testDatabaseUrl } from '../helpers/environment.js';
import { eventually } from '../helpers/poll.js';
import type { Reply } from '../helpers/replies.js';
import { startTcpProxy, throughProxy } from '../helpers/tcp-proxy.js';
import { createTestDatabase } from '../helpers/test-database.js';
import { bearer, issueToken } from '../helpers/tokens.js';

/*
 * PostgreSQL going away while group-committed writes (interaction logs and ping batches) are in flight, then
 * coming back: a TCP proxy in front of it drops every connection and refuses new ones, which is what a
 * restart looks like from the service's side (the real server is shared with the other suites). Every write
 * is answered, 200 and stored or a 503 ErrorResponse, none hangs, nothing answered 200 is lost, and the
 * service writes again once the database is back, without a restart. (database-outage.test.ts covers reads:
 * token lookups in flight, 503 meanwhile, /ready, recovery.)
 */

const WRITERS = 12;
/** A write must be answered within this (a wide bound, showing none hangs; the pool waits 1 s to connect). */
const ANSWER_BOUND_MS = 15_000;
/** Answers to wait for in each phase before moving to the next. */
const PER_PHASE = 20;
const PLAYER = '20934ef9488c465180a78f861586b4cf';

type Kind = 'log' | 'ping';

interface Outcome {
  readonly kind: Kind;
  readonly n: number;
  readonly reply: Reply;
  readonly tookMs: number;
}

/** The service on PostgreSQL through a proxy, its connections named so that the test can see them wait. */
async function appBehindProxy(t: TestContext, cache: (typeof allCaches)[number]) {
  const database = await createTestDatabase('postgres');
  deferClose(t, () => database.drop());
  const target = new URL(String(testDatabaseUrl));
  const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  deferClose(t, () => proxy.close());
  const applicationName = `pds_writes_${randomBytes(6).toString('hex')}`;
  const url = new URL(database.url);
  url.searchParams.set('application_name', applicationName);
  const test = await buildTestApp(t, {
    dialect: 'postgres',
    redis: cache === 'redis',
    databaseUrl: throughProxy(url.toString(), proxy),
    env: { DATABASE_POOL_CONNECT_TIMEOUT_MS: '1000' },
  });
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  deferClose(t, () => admin.end());
  return { test, proxy, admin, applicationName };
}

/** Write `n`: an interaction log whose user is `n`, or a ping batch whose lobby names `n`. */
function write(test: TestApp, token: string, kind: Kind, n: number) {
  const payload =
    kind === 'log'
      ? {
          interaction: {
            interaction_name: 'stats',
            interaction_token: `outage-${n}-${randomBytes(4).toString('hex')}`,
            interaction_type: 'APPLICATION_COMMAND',
            user_id: String(n),
          },
          user: { user_id: String(n), username: `user${n}` },
        }
      : { samples: [{ ping: n % 60_000, lobby: `w${n}` }] };
  return test.app.inject({
    method: 'POST',
    url: kind === 'log' ? '/messenger/logging/interaction' : `/ping/${PLAYER}`,
    headers: { ...bearer(token), 'content-type': 'application/json' },
    payload,
  });
}

/** Writers that post logs and ping batches, alternately, until stopped; every answer is kept. */
function startWriters(test: TestApp, token: string) {
  const outcomes: Outcome[] = [];
  let next = 1;
  let stopped = false;
  const writer = async () => {
    while (!stopped) {
      const n = next++;
      const kind: Kind = n % 2 === 0 ? 'log' : 'ping';
      const started = performance.now();
      // Only a closed app (the test over) fails to answer at all.
      const reply = await write(test, token, kind, n).catch(() => undefined);
      if (!reply) return;
      outcomes.push({ kind, n, reply, tookMs: performance.now() - started });
    }
  };
  const running = Promise.all(Array.from({ length: WRITERS }, writer));
  return {
    outcomes,
    /** Answers so far that satisfy `test`. */
    count: (status: number) => outcomes.filter((outcome) => outcome.reply.statusCode === status).length,
    inFlight: () => next - 1 - outcomes.length,
    /** Stops sending; resolves once every write sent is answered, and throws if one is not in time. */
    async stop() {
      stopped = true;
      const late = sleep(ANSWER_BOUND_MS, undefined, { ref: false }).then(() => {
        throw new Error(`a write still unanswered ${ANSWER_BOUND_MS} ms after the writers stopped`);
      });
      await Promise.race([running, late]);
    },
  };
}

/** A write the database could not take: a 503 ErrorResponse saying so, with Retry-After. */
function assertUnavailable({ reply, kind, n }: Outcome) {
  const what = `${kind} ${n}: ${reply.body}`;
  assert.equal(reply.statusCode, 503, what);
  assert.ok(Number(reply.headers['retry-after']) >= 1, `${what}: with Retry-After`);
  const body = JSON.parse(reply.body);
  assert.equal(body.success, false, what);
  assert.deepEqual(
    body.extra.map((problem: { name: string }) => problem.name),
    ['DEPENDENCY_UNAVAILABLE'],
    what,
  );
}

/** The writes the database holds: logs by user, ping batches by lobby. */
async function stored(admin: pg.Client): Promise<Set<string>> {
  const logs = await admin.query<{ user_id: string }>('select user_id from interaction_logs');
  const pings = await admin.query<{ lobby: string }>('select lobby from ping_samples');
  return new Set([
    ...logs.rows.map((row) => `log ${row.user_id}`),
    ...pings.rows.map((row) => `ping ${row.lobby.slice(1)}`),
  ]);
}

/** How many of the app's connections wait on a lock. */
async function waitingOnLocks(admin: pg.Client, applicationName: string): Promise<number> {
  const { rows } = await admin.query<{ n: number }>(
    "select count(*)::int as n from pg_stat_activity where application_name = $1 and wait_event_type = 'Lock'",
    [applicationName],
  );
  return rows[0]?.n ?? 0;
}

for (const cache of allCaches) {
  describeOrSkip(
    `PostgreSQL lost with writes in flight (the ${cache} cache)`,
    { skip: skipOn('postgres', cache) },
    () => {
      it('answers every write 200 and stored, or 503 with Retry-After; loses none answered 200; writes again once back', async (t) => {
        const { test, proxy, admin, applicationName } = await appBehindProxy(t, cache);
        const token = await issueToken(test.app, test.config, {
          owner: 42n,
          grants: ['messenger:log', 'ping:write'],
        });
        const writers = startWriters(test, token);
        // Not waited for: a write that hangs must fail the test, not hold it open.
        t.after(() => void writers.stop());
        await eventually('writes before the outage', () => writers.count(200) >= PER_PHASE);

        // Hold both tables, so that a batch of each kind is in its transaction, for sure, when the
        // connections drop.
        await admin.query('begin');
        await admin.query('lock table interaction_logs, ping_samples in access exclusive mode');
        await eventually('both committers waiting on the lock', async () => {
          return (await waitingOnLocks(admin, applicationName)) >= 2 && writers.inFlight() === WRITERS;
        });
        const answeredBeforeCut = writers.outcomes.length;
        proxy.cut();
        await eventually(
          'the writes in flight answered',
          () => writers.outcomes.length >= answeredBeforeCut + WRITERS,
        );
        const atTheCut = writers.outcomes.slice(answeredBeforeCut, answeredBeforeCut + WRITERS);
        await admin.query('rollback');

        const unavailableAtRestore = writers.count(503) + PER_PHASE;
        await eventually(
          'writes refused during the outage',
          () => writers.count(503) >= unavailableAtRestore,
        );
        proxy.restore();
        const acknowledgedAtRestore = writers.count(200);
        await eventually(
          'writes after the outage',
          () => writers.count(200) >= acknowledgedAtRestore + PER_PHASE,
        );
        await writers.stop();

        for (const outcome of atTheCut) assertUnavailable(outcome);
        for (const outcome of writers.outcomes) {
          if (outcome.reply.statusCode !== 200) assertUnavailable(outcome);
          assert.ok(
            outcome.tookMs < ANSWER_BOUND_MS,
            `${outcome.kind} ${outcome.n} took ${outcome.tookMs} ms`,
          );
        }
        const held = await stored(admin);
        const lost = writers.outcomes
          .filter(({ reply }) => reply.statusCode === 200)
          .map(({ kind, n }) => `${kind} ${n}`)
          .filter((write) => !held.has(write));
        assert.deepEqual(lost, [], 'every write answered 200 is stored');
        // Those whose transaction was cut before its commit was sent: the 503 told the truth.
        const keptAnyway = atTheCut.map(({ kind, n }) => `${kind} ${n}`).filter((write) => held.has(write));
        assert.deepEqual(keptAnyway, [], 'the writes cut mid-transaction are not stored');
        // An outage is expected weather: warnings, never an error with a stack per failed write.
        assert.deepEqual(
          test.logs.lines.filter((line) => line.level === 'error' || line.level === 'fatal'),
          [],
        );
        t.diagnostic(
          `${writers.count(200)} written, ${writers.count(503)} refused, of ${writers.outcomes.length}`,
        );
      });
    },
  );
}
