import assert from 'node:assert/strict';
import { it, type TestContext } from 'node:test';
import { sql } from 'kysely';
import { loadConfig } from '../../../src/config.js';
import { createOwnerUsageService } from '../../../src/modules/owner-usage/owner-usage.service.js';
import { createDatabase } from '../../../src/platform/db/database.js';
import { executorOf } from '../../../src/platform/db/transactions.js';
import { createUsageMeter } from '../../../src/platform/limits/usage-meter.js';
import { type Backend, describeEachBackend } from '../../helpers/backends.js';
import { buildTestApp } from '../../helpers/build-test-app.js';
import { FIXTURE_PLAYERS, startFakeUpstream } from '../../helpers/fake-upstream.js';
import { json } from '../../helpers/replies.js';
import { bearer, issueToken } from '../../helpers/tokens.js';

const OWNER = 424242424242424242n;
const OTHER = 7n;

async function usageOn(t: TestContext, backend: Backend) {
  const test = await buildTestApp(t, { backend });
  const db = executorOf(test.app.db);
  /** An instance's meter and the service that stores it, on the test's database. */
  const instance = (now: () => number = Date.now) => {
    const meter = createUsageMeter(now);
    return { meter, service: createOwnerUsageService({ db, meter, settings: { retentionDays: 2 }, now }) };
  };
  return { ...test, instance };
}

describeEachBackend("owners' usage of the day", (backend) => {
  it('adds what every instance counted, owner by owner, and shows what is not stored yet', async (t) => {
    const { instance } = await usageOn(t, backend);
    const first = instance();
    const second = instance();
    for (let n = 0; n < 3; n++) first.meter.count(OWNER, 'requests');
    first.meter.count(OWNER, 'refused');
    second.meter.count(OWNER, 'requests');
    second.meter.count(OWNER, 'upstream');
    second.meter.count(OTHER, 'requests');
    assert.deepEqual(
      { ...(await first.service.today(OWNER)), day: undefined },
      { day: undefined, requests: 3, upstream: 0, refused: 1 },
      "an instance's own counts, before any is stored",
    );
    await Promise.all([first.service.flush(), second.service.flush()]);
    const today = await first.service.today(OWNER);
    assert.equal(today.day, new Date().toISOString().slice(0, 10));
    assert.deepEqual({ ...today, day: undefined }, { day: undefined, requests: 4, upstream: 1, refused: 1 });
    assert.equal((await second.service.today(OTHER)).requests, 1, "another owner's are their own");
    // Flushing again adds only what came since.
    first.meter.count(OWNER, 'requests');
    await first.service.flush();
    await first.service.flush();
    assert.equal((await second.service.today(OWNER)).requests, 5);
  });

  it('many instances flushing the same rows at once lose nothing and never deadlock', async (t) => {
    const { instance } = await usageOn(t, backend);
    const owners = Array.from({ length: 20 }, (_, index) => BigInt(index + 1));
    const instances = Array.from({ length: 4 }, () => instance());
    for (let round = 0; round < 5; round++) {
      for (const [which, { meter }] of instances.entries()) {
        // Each instance meets the owners in a different order: the rows are still written in one.
        const order = which % 2 === 0 ? owners : [...owners].reverse();
        for (const owner of order) meter.count(owner, 'requests');
      }
      await Promise.all(instances.map(({ service }) => service.flush()));
    }
    for (const owner of owners) assert.equal((await instances[0]?.service.today(owner))?.requests, 4 * 5);
  });

  it('keeps the counts of a write that failed, and stores them with the next', async (t) => {
    const { app, instance } = await usageOn(t, backend);
    const { meter, service } = instance();
    meter.count(OWNER, 'requests');
    meter.count(OWNER, 'requests');
    await sql`alter table owner_usage rename to owner_usage_away`.execute(app.db);
    await assert.rejects(service.flush());
    meter.count(OWNER, 'requests');
    await sql`alter table owner_usage_away rename to owner_usage`.execute(app.db);
    assert.equal((await service.today(OWNER)).requests, 3, 'the failed write’s counts are still shown');
    await service.flush();
    assert.equal((await instance().service.today(OWNER)).requests, 3, 'and stored by the next flush');
  });

  it('deletes the days beyond the retention, and only those', async (t) => {
    const { app, instance } = await usageOn(t, backend);
    let now = 0;
    const { meter, service } = instance(() => now);
    // Kept 2 days back from the 25th: the 23rd is the oldest day kept, the 22nd the newest deleted.
    for (const day of ['2026-11-20', '2026-11-22', '2026-11-23', '2026-11-25']) {
      now = Date.parse(`${day}T12:00:00Z`);
      meter.count(OWNER, 'requests');
      await service.flush();
    }
    assert.deepEqual(await service.purge(), { deleted: 2 });
    const { rows } = await sql<{ day: string }>`select day from owner_usage order by day`.execute(app.db);
    assert.deepEqual(
      rows.map((row) => row.day),
      ['2026-11-23', '2026-11-25'],
    );
    assert.equal((await service.today(OWNER)).requests, 1);
  });

  it('counts, through the service, requests, upstream lookups and 429s per owner', async (t) => {
    const upstream = await startFakeUpstream();
    t.after(() => upstream.close());
    // A budget of 8 units a second, refused at once beyond it.
    const { app, config } = await buildTestApp(t, {
      backend,
      upstream,
      env: { WORK_BUDGET_UNITS: '8', WORK_BUDGET_WINDOW_SECONDS: '1', WORK_BUDGET_REFUSAL_DELAY_MS: '0' },
    });
    const token = await issueToken(app, config, { owner: OWNER });
    const other = await issueToken(app, config, { owner: OTHER });
    const get = (url: string, auth = token) => app.inject({ method: 'GET', url, headers: bearer(auth) });
    assert.equal(
      (await get(`/player/${FIXTURE_PLAYERS.minikloon.uuid}`)).statusCode,
      200,
      'a miss: one lookup',
    );
    assert.equal((await get(`/player/${FIXTURE_PLAYERS.minikloon.uuid}`)).statusCode, 200, 'a hit: none');
    const statuses: number[] = [];
    for (let n = 0; n < 30; n++) statuses.push((await get('/auth/me')).statusCode);
    const refused = statuses.filter((status) => status === 429).length;
    assert.ok(refused > 0, `the budget refused some: ${statuses.join(' ')}`);
    const me = json(await get('/auth/me', other));
    assert.deepEqual(me.usage_today, {
      day: me.usage_today.day,
      requests: 0,
      upstream_lookups: 0,
      refused: 0,
    });
    await new Promise((resolve) => setTimeout(resolve, 1100)); // the owner's budget refills
    const mine = json(await get('/auth/me')).usage_today;
    assert.equal(mine.upstream_lookups, 1);
    assert.equal(mine.refused, refused);
    assert.equal(mine.requests, 2 + 30, 'every request answered before this one, refused ones included');
  });

  it('stores what was counted but not yet flushed when the service closes', async (t) => {
    const { app, config, databaseUrl } = await buildTestApp(t, { backend });
    const token = await issueToken(app, config, { owner: OWNER });
    for (let n = 0; n < 3; n++)
      assert.equal(
        (await app.inject({ method: 'GET', url: '/auth/me', headers: bearer(token) })).statusCode,
        200,
      );
    // Well within the flush period: only the close can have stored them.
    await app.close();
    const db = createDatabase(loadConfig({ DATABASE_URL: databaseUrl }).database);
    t.after(() => db.destroy());
    const { rows } = await sql<{ requests: number }>`
      select requests from owner_usage where owner = ${OWNER.toString()}`.execute(db);
    assert.deepEqual(
      rows.map((row) => Number(row.requests)),
      [3],
    );
  });
});
