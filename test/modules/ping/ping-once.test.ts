import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { loadConfig } from '../../../src/config.js';
import { migrations } from '../../../src/migrations.js';
import { createPingRepository } from '../../../src/modules/ping/ping.repository.js';
import { RESEND_MARGIN_MS } from '../../../src/modules/ping/ping-writes.service.js';
import { createDatabase, type Database } from '../../../src/platform/db/database.js';
import { migrateToLatest } from '../../../src/platform/db/migrator.js';
import { executorOf } from '../../../src/platform/db/transactions.js';
import { MAX_PROBLEMS } from '../../../src/platform/errors.js';
import { describeEachBackend, describeOrSkip } from '../../helpers/backends.js';
import { buildTestApp, deferClose } from '../../helpers/build-test-app.js';
import { skipOn } from '../../helpers/environment.js';
import { type FakeUpstream, FIXTURE_PLAYERS, startFakeUpstream } from '../../helpers/fake-upstream.js';
import { eventually } from '../../helpers/poll.js';
import { problems } from '../../helpers/replies.js';
import { createTestDatabase } from '../../helpers/test-database.js';
import { issueToken } from '../../helpers/tokens.js';
import { expectedDays, pingServiceOnClock, type SentSample, sendSamples, setupPing } from './ping-app.js';

const PLAYER = FIXTURE_PLAYERS.minikloon.uuid;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** The owner of the tokens setupPing issues (issueToken's default), and two more. */
const OWNER = 123456789012345678n;
const OTHER = 2n;
const THIRD = 18446744073709551615n;

/** A day's row as kept: statistics, last sample, history and the history's times. */
const dayRows = async (app: FastifyInstance) =>
  (await sql<Record<string, unknown>>`select * from ping_days order by player, day`.execute(app.db)).rows;

/** How many raw samples each owner wrote, by owner (decimal digits). */
const samplesByOwner = async (app: FastifyInstance): Promise<Record<string, number>> =>
  Object.fromEntries(
    (
      await sql<{ owner: string; count: number }>`
        select owner, count(*) as count from ping_samples group by owner`.execute(app.db)
    ).rows.map((row) => [row.owner, Number(row.count)]),
  );

/** Where the batches start: two days before the suite. */
const START = Date.now() - 2 * DAY;

/**
 * `count` samples (dividing 1000) over the two days from START, every `2 * DAY / count` ms (whole seconds),
 * `seed` ms after: batches of distinct seeds (under 1000) share no time.
 */
const batchOf = (count: number, seed: number, lobby = 'main'): SentSample[] =>
  Array.from({ length: count }, (_, index) => ({
    ping: (index * 7919 + seed) % 60_001,
    lobby: `${lobby}_${index % 5}`,
    at: START + index * ((2 * DAY) / count) + seed,
  }));

type Ingested = { player: string; stored: number; duplicates: number };

describeEachBackend('ping samples are stored once', (backend) => {
  let fake: FakeUpstream;
  before(async () => {
    fake = await startFakeUpstream();
  });
  after(() => fake.close());

  it('stores a batch sent again not at all: the samples, statistics, history and last sample stay as they were', async (t) => {
    const { app, post, days, count } = await setupPing(t, fake, backend);
    // A quiet day (avg 40), then a batch of long pings, then that batch sent again, twice.
    const quiet = [{ ping: 40, lobby: 'quiet', at: Date.now() - 3 * DAY }];
    assert.equal((await post(PLAYER, quiet)).statusCode, 200);
    const batch = batchOf(1000, 11).map((sample) => ({ ...sample, ping: 60_000 - (sample.ping % 500) }));
    const first = await post(PLAYER, batch);
    assert.equal(first.statusCode, 200, first.body);
    assert.deepEqual(first.json(), { player: PLAYER, stored: 1000, duplicates: 0 });
    const shown = await days(PLAYER);
    assert.deepEqual(shown, expectedDays([...quiet, ...batch], 1440));
    const kept = await dayRows(app);
    for (const _ of [1, 2]) {
      const again = await post(PLAYER, batch);
      assert.equal(again.statusCode, 200, again.body);
      assert.deepEqual(again.json(), { player: PLAYER, stored: 0, duplicates: 1000 });
    }
    assert.equal(await count('ping_samples'), 1001);
    assert.deepEqual(await dayRows(app), kept, 'the days’ rows, to the history’s times, are unchanged');
    assert.deepEqual(await days(PLAYER), shown);
    assert.equal(shown.at(-1)?.avg, 40, 'the quiet day is still the quiet day');
    // Sent again out of order, and by way of the username: still the same samples.
    const reversed = await post(FIXTURE_PLAYERS.minikloon.name, [...batch].reverse());
    assert.deepEqual(reversed.json(), { player: PLAYER, stored: 0, duplicates: 1000 });
    assert.deepEqual(await dayRows(app), kept);
  });

  it('stores a sample repeated within a batch once, and tells a repeat from a different sample at the same time', async (t) => {
    const { app, post, days, count } = await setupPing(t, fake, backend);
    const at = Date.now() - HOUR;
    const a = { ping: 30, lobby: 'a', at };
    const b = { ping: 31, lobby: 'a', at };
    const c = { ping: 30, lobby: 'A', at };
    const d = { ping: 30, lobby: 'a', at: at + 1 };
    const reply = await post(PLAYER, [a, b, a, c, a, d, b, d]);
    assert.equal(reply.statusCode, 200, reply.body);
    assert.deepEqual(reply.json(), { player: PLAYER, stored: 4, duplicates: 4 });
    assert.equal(await count('ping_samples'), 4);
    assert.deepEqual(await days(PLAYER), expectedDays([a, b, c, d], 1440));
    const [day] = await dayRows(app);
    assert.equal(Number(day?.samples), 4);
    assert.equal(Number(day?.total), 30 + 31 + 30 + 30);
    // Part old, part new: only the new ones count, and the answer says which is which.
    const e = { ping: 99, lobby: 'e', at: at + 2 };
    const mixed = await post(PLAYER, [d, e, a, e]);
    assert.deepEqual(mixed.json(), { player: PLAYER, stored: 1, duplicates: 3 });
    assert.deepEqual(await days(PLAYER), expectedDays([a, b, c, d, e], 1440));
    // The same sample for another player is another sample.
    const other = FIXTURE_PLAYERS.builder.uuid;
    assert.deepEqual((await post(other, [a])).json(), { player: other, stored: 1, duplicates: 0 });
    // A lobby is its text, however its characters are composed (NFC, NFD): one sample, kept composed.
    const composed = { ping: 50, lobby: 'caf\u00e9', at: at + 3 };
    const decomposed = { ...composed, lobby: 'cafe\u0301' };
    assert.deepEqual((await post(other, [decomposed])).json(), { player: other, stored: 1, duplicates: 0 });
    assert.deepEqual((await post(other, [composed])).json(), { player: other, stored: 0, duplicates: 1 });
    const [latest] = await days(other);
    assert.equal(latest?.last_lobby, 'caf\u00e9');
  });

  it('records who wrote each sample, and the first writer keeps a sample another owner sends again', async (t) => {
    const { app, config, post, days } = await setupPing(t, fake, backend);
    const other = await issueToken(app, config, { owner: OTHER, grants: ['ping:write'] });
    const largest = await issueToken(app, config, { owner: THIRD, grants: ['ping:write'] });
    const batch = batchOf(50, 3);
    assert.deepEqual((await post(PLAYER, batch.slice(0, 20))).json(), {
      player: PLAYER,
      stored: 20,
      duplicates: 0,
    });
    const before = await days(PLAYER);
    assert.deepEqual((await post(PLAYER, batch.slice(0, 20), other)).json(), {
      player: PLAYER,
      stored: 0,
      duplicates: 20,
    });
    assert.deepEqual(await days(PLAYER), before);
    assert.deepEqual((await post(PLAYER, batch, largest)).json(), {
      player: PLAYER,
      stored: 30,
      duplicates: 20,
    });
    assert.deepEqual(await samplesByOwner(app), { [String(OWNER)]: 20, [String(THIRD)]: 30 });
    assert.deepEqual(await days(PLAYER), expectedDays(batch, 1440));
  });

  it('stores a sample once when the batches of one transaction repeat it, whoever sent them', async (t) => {
    // A linger groups the batches sent together into one transaction.
    const { app, config, post, days, count } = await setupPing(t, fake, backend, {
      GROUP_COMMIT_LINGER_MS: '300',
    });
    const other = await issueToken(app, config, { owner: OTHER, grants: ['ping:write'] });
    const batch = batchOf(200, 5);
    const fresh = batchOf(100, 6);
    const overlapping = [...fresh, ...batch.slice(0, 100)];
    const replies = await Promise.all([
      post(PLAYER, batch),
      post(PLAYER, batch, other),
      post(PLAYER, overlapping),
      post(PLAYER, batch),
      post(PLAYER, overlapping, other),
    ]);
    const answers = replies.map((reply) => {
      assert.equal(reply.statusCode, 200, reply.body);
      return reply.json() as Ingested;
    });
    const sent = answers.reduce((sum, answer) => sum + answer.stored + answer.duplicates, 0);
    assert.equal(sent, 200 * 3 + 200 * 2);
    assert.equal(
      answers.reduce((sum, answer) => sum + answer.stored, 0),
      300,
    );
    assert.equal(await count('ping_samples'), 300);
    const byOwner = await samplesByOwner(app);
    const storedBy = (indexes: number[]) =>
      indexes.reduce((sum, index) => sum + (answers[index]?.stored ?? 0), 0);
    assert.equal(byOwner[String(OWNER)] ?? 0, storedBy([0, 2, 3]));
    assert.equal(byOwner[String(OTHER)] ?? 0, storedBy([1, 4]));
    // Every sample has a time of its own: whichever batch stored it, the days are exact.
    assert.deepEqual(await days(PLAYER), expectedDays([...batch, ...fresh], 1440));
  });

  it('stores a batch once when owners send it at once through two instances, and one owner from many requests', async (t) => {
    // One commit per request, so that the requests' transactions interleave as much as they can.
    const env = { GROUP_COMMIT_MAX_BATCH: '1' };
    const first = await setupPing(t, fake, backend, env);
    const second = await buildTestApp(t, {
      backend,
      env,
      databaseUrl: first.databaseUrl,
      upstream: fake,
      redisKeyPrefix: first.config.redisKeyPrefix,
    });
    const secondOther = await issueToken(second.app, second.config, { owner: OTHER, grants: ['ping:write'] });
    const secondOwner = await issueToken(second.app, second.config, { owner: OWNER, grants: ['ping:write'] });
    const sent: SentSample[] = [];
    const storedBy = new Map<bigint, number>();
    for (const round of [1, 2, 3]) {
      const batch = batchOf(300, 100 + round, `round${round}`);
      sent.push(...batch);
      const senders = [
        { owner: OWNER, send: () => first.post(PLAYER, batch) },
        { owner: OTHER, send: () => sendSamples(second.app, secondOther, PLAYER, batch) },
        ...Array.from({ length: 6 }, (_, index) => ({
          owner: OWNER,
          send: () =>
            index % 2 === 0 ? first.post(PLAYER, batch) : sendSamples(second.app, secondOwner, PLAYER, batch),
        })),
      ];
      const answers = await Promise.all(
        senders.map(async ({ owner, send }) => {
          const reply = await send();
          assert.equal(reply.statusCode, 200, reply.body);
          return { owner, ...(reply.json() as Ingested) };
        }),
      );
      for (const answer of answers) assert.equal(answer.stored + answer.duplicates, 300);
      assert.equal(
        answers.reduce((sum, answer) => sum + answer.stored, 0),
        300,
        `round ${round}: stored once in all`,
      );
      assert.equal(await first.count('ping_samples'), sent.length);
      for (const answer of answers)
        storedBy.set(answer.owner, (storedBy.get(answer.owner) ?? 0) + answer.stored);
      // Each sample is its storer's: the owners' rows are what their answers said they stored.
      const byOwner = await samplesByOwner(first.app);
      for (const owner of [OWNER, OTHER])
        assert.equal(byOwner[String(owner)] ?? 0, storedBy.get(owner) ?? 0, JSON.stringify(byOwner));
    }
    assert.deepEqual(await first.days(PLAYER), expectedDays(sent, 1440));
  });

  it('refuses samples more than a minute ahead, naming each, and answers at most 20 problems', async (t) => {
    const { post, count, days } = await setupPing(t, fake, backend);
    const now = Date.now();
    const good = { ping: 40, lobby: 'main', at: now - MINUTE };
    // Well past the minute, however slowly the request travels.
    const ahead = { ping: 40, lobby: 'ahead', at: now + 3 * MINUTE };
    const some = await post(PLAYER, [good, good, good, ahead, good, ahead]);
    assert.equal(some.statusCode, 400, some.body);
    assert.deepEqual(
      problems(some).map((problem) => problem.developer_reason),
      [3, 5].map(
        (index) => `body/samples/${index}/at must be at most 60 seconds after the request was received`,
      ),
    );
    const all = await post(
      PLAYER,
      Array.from({ length: 1000 }, (_, index) => ({ ...ahead, ping: index })),
    );
    assert.equal(all.statusCode, 400, all.body);
    assert.equal(MAX_PROBLEMS, 20);
    assert.deepEqual(
      problems(all).map((problem) => problem.developer_reason),
      Array.from(
        { length: MAX_PROBLEMS },
        (_, index) => `body/samples/${index}/at must be at most 60 seconds after the request was received`,
      ),
    );
    assert.equal(await count('ping_samples'), 0);
    assert.deepEqual(await days(PLAYER), []);
    // Within the minute: taken.
    const near = await post(PLAYER, [{ ...good, at: Date.now() + 30_000 }]);
    assert.deepEqual(near.json(), { player: PLAYER, stored: 1, duplicates: 0 });
  });
});

describeEachBackend('ping samples are stored once, whatever the retention deleted meanwhile', (backend) => {
  it('keeps a raw sample a day past the window it is accepted in, so that a resend waiting for its commit finds it', async (t) => {
    const resolving: (() => void)[] = [];
    const { service, clock, settings } = await pingServiceOnClock(t, backend, {
      start: Date.UTC(2026, 10, 22, 12),
      // A username resolves when the test says so (a slow Mojang); a UUID at once.
      uuidOf: async (player) => {
        if (player !== PLAYER) await new Promise<void>((resolve) => resolving.push(resolve));
        return PLAYER;
      },
    });
    const window = settings.retentionDays * DAY;
    // Just inside the window it is accepted in.
    const edge = { ping: 50, lobby: 'edge', at: clock.now() - window + 100 };
    assert.deepEqual(await service.ingest(PLAYER, [edge], OWNER), { uuid: PLAYER, stored: 1, duplicates: 0 });

    // Sent again (a retry), naming the player by name: accepted, then waiting for its name while the
    // sample leaves the window and the retention runs.
    const resent = service.ingest('Minikloon', [edge], OWNER);
    await eventually('the resend waits for its name', () => resolving.length === 1);
    await clock.advance(1000);
    assert.equal(await service.deleteExpired(), 0, 'kept past the window');
    for (const resolve of resolving) resolve();
    assert.deepEqual(await resent, { uuid: PLAYER, stored: 0, duplicates: 1 });
    const [day] = (await service.history(PLAYER, {}, OWNER)).days;
    assert.equal(day?.samples, 1, 'one sample, counted once');
    assert.equal(day?.historyJson, '[50]');

    // The margin is a day: the row goes once the sample is older than the window and a day.
    await clock.advance(RESEND_MARGIN_MS + 100 - 1000);
    assert.equal(await service.deleteExpired(), 0, 'at the margin, kept');
    await clock.advance(1);
    assert.equal(await service.deleteExpired(), 1, 'past it, deleted');
    assert.equal((await service.history(PLAYER, {}, OWNER)).days[0]?.samples, 1, 'the day stays');
  });
});

describeOrSkip('a sample two transactions store at once, on PostgreSQL', { skip: skipOn('postgres') }, () => {
  it('makes the second writer wait for the first: it stores nothing if the first commits, the sample if it rolls back', async (t) => {
    const database = await createTestDatabase('postgres');
    deferClose(t, () => database.drop());
    const settings = loadConfig({ DATABASE_URL: database.url }).database;
    const [one, two] = [createDatabase(settings), createDatabase(settings)] as const;
    deferClose(t, () => one.destroy());
    deferClose(t, () => two.destroy());
    await migrateToLatest(one, migrations);
    const sample = { at: Date.now() - MINUTE, ping: 40, lobby: 'main' };
    const insert = (transaction: Database, owner: bigint) =>
      createPingRepository(executorOf(transaction)).insertNewSamples(PLAYER, [{ ...sample, owner }]);
    for (const outcome of ['commit', 'rollback'] as const) {
      const release: (() => void)[] = [];
      const held = new Promise<void>((resolve) => release.push(resolve));
      const reported: ((count: number) => void)[] = [];
      const inserted = new Promise<number>((resolve) => reported.push(resolve));
      const first = one
        .transaction()
        .execute(async (transaction) => {
          const count = (await insert(transaction, 1n)).length;
          for (const report of reported) report(count);
          await held;
          if (outcome === 'rollback') throw new Error('rolled back on purpose');
        })
        .catch((error: unknown) => error);
      assert.equal(await inserted, 1);
      let pid: number | undefined;
      const second = two.transaction().execute(async (transaction) => {
        pid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(transaction)).rows[0]?.pid;
        return insert(transaction, 2n);
      });
      await eventually('the second writer waits for the first transaction', async () => {
        if (pid === undefined) return false;
        const { rows } = await sql<{ wait: string | null }>`
          select wait_event_type as wait from pg_stat_activity where pid = ${pid}`.execute(one);
        return rows[0]?.wait === 'Lock';
      });
      for (const done of release) done();
      await first;
      const stored = await second;
      const { rows } = await sql<{ owner: string }>`select owner from ping_samples`.execute(one);
      if (outcome === 'commit') {
        assert.deepEqual(stored, [], 'the first committed it: the second stores nothing');
        assert.deepEqual(rows, [{ owner: '1' }]);
      } else {
        assert.deepEqual(stored, [sample], 'the first rolled back: the second stores it');
        assert.deepEqual(rows, [{ owner: '2' }]);
      }
      await sql`delete from ping_samples`.execute(one);
    }
  });
});
