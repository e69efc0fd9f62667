import assert from 'node:assert/strict';
import { it, type TestContext } from 'node:test';
import { sql } from 'kysely';
import { loadConfig } from '../../../src/config.js';
import { migrations } from '../../../src/migrations.js';
import { createPingService } from '../../../src/modules/ping/ping.service.js';
import { createDatabase, type Database } from '../../../src/platform/db/database.js';
import { migrateToLatest } from '../../../src/platform/db/migrator.js';
import { executorOf } from '../../../src/platform/db/transactions.js';
import { type Backend, describeEachBackend } from '../../helpers/backends.js';
import { deferClose } from '../../helpers/build-test-app.js';
import { createTestDatabase } from '../../helpers/test-database.js';

/** The schema a deployment has before owners were recorded: every migration up to 0008. */
const LAST_BEFORE = '0008-token-changes';
const BEFORE_OWNERS = Object.fromEntries(Object.entries(migrations).filter(([name]) => name <= LAST_BEFORE));

const PLAYER = '20934ef9488c465180a78f861586b4cf';
const OTHER_PLAYER = 'ef962ec2df6e48a2ac9d6062c1b84652';
const HOUR = 3_600_000;

interface SampleRow {
  id: number;
  player: string;
  at: number;
  ping: number;
  lobby: string;
}

/** A database migrated as a deployment of the previous version had it. */
async function previousVersion(t: TestContext, backend: Backend) {
  assert.ok(LAST_BEFORE in migrations);
  const database = await createTestDatabase(backend.dialect);
  deferClose(t, () => database.drop());
  const config = loadConfig({ DATABASE_URL: database.url });
  const db = createDatabase(config.database);
  deferClose(t, () => db.destroy());
  await migrateToLatest(db, BEFORE_OWNERS);
  return { db, config };
}

/** A token row as the tokens module writes it. */
async function issued(db: Database, jti: string, owner: string, grants: string): Promise<void> {
  await sql`
    insert into tokens (jti, owner, grants, chain_id, issued_at, expires_at)
    values (${jti}, ${owner}, ${grants}, ${jti}, ${0}, ${HOUR})`.execute(db);
}

/**
 * Samples as the previous version stored them, one statement each (so ids grow in this order), duplicates
 * included: the same sample three times, another twice, and samples that differ only by player, lobby,
 * ping or time. Answers the rows as stored, and the ids of the earliest copy of each.
 */
async function legacySamples(db: Database) {
  const at = Date.now() - HOUR;
  const a = { player: PLAYER, at, ping: 40, lobby: 'main' };
  const b = { player: PLAYER, at: at + 1000, ping: 41, lobby: 'main' };
  const sent = [
    a,
    b,
    a,
    { ...a, player: OTHER_PLAYER },
    { ...a, lobby: 'Main' },
    b,
    { ...a, ping: 41 },
    a,
    { ...a, at: at + 1 },
  ];
  for (const sample of sent) {
    await sql`
      insert into ping_samples (player, at, ping, lobby)
      values (${sample.player}, ${sample.at}, ${sample.ping}, ${sample.lobby})`.execute(db);
  }
  const rows = await sampleRows(db);
  const earliest = new Map<string, SampleRow>();
  for (const row of rows) {
    const key = JSON.stringify([row.player, row.at, row.ping, row.lobby]);
    if (!earliest.has(key)) earliest.set(key, row);
  }
  // The day they fall on, as the previous version kept it: the duplicates counted.
  const counted = sent.filter((sample) => sample.player === PLAYER).sort((x, y) => x.at - y.at);
  const pings = counted.map((sample) => sample.ping);
  await sql`
    insert into ping_days (player, day, samples, total, min, max, last_at, last_lobby, history, history_at)
    values (${PLAYER}, ${new Date(at).toISOString().slice(0, 10)}, ${counted.length},
      ${pings.reduce((sum, ping) => sum + ping, 0)}, ${Math.min(...pings)}, ${Math.max(...pings)},
      ${b.at}, ${b.lobby}, ${JSON.stringify(pings)},
      ${JSON.stringify(counted.map((sample) => sample.at))})`.execute(db);
  return { rows, kept: [...earliest.values()], a, b };
}

const sampleRows = async (db: Database): Promise<SampleRow[]> =>
  (
    await sql<SampleRow>`select id, player, at, ping, lobby from ping_samples order by id`.execute(db)
  ).rows.map((row) => ({ ...row, id: Number(row.id), at: Number(row.at) }));

const ownedRows = async (db: Database) =>
  (
    await sql<SampleRow & { owner: string }>`
      select id, player, at, ping, lobby, owner from ping_samples order by id`.execute(db)
  ).rows.map((row) => ({ ...row, id: Number(row.id), at: Number(row.at) }));

const dayRows = async (db: Database) =>
  (await sql<Record<string, unknown>>`select * from ping_days`.execute(db)).rows;

describeEachBackend('migration 0011-ping-owners: an existing deployment upgrades in place', (backend) => {
  it('gives the samples the one owner ever given ping:write, keeps the earliest of equal ones, and leaves the days', async (t) => {
    const { db, config } = await previousVersion(t, backend);
    // Owner 42 held ping:write in two tokens; the others never did, whatever their grants look like.
    await issued(db, 'j1', '42', 'player:read ping:write');
    await issued(db, 'j2', '42', 'ping:write');
    await issued(db, 'j3', '7', 'ping:read player:read');
    await issued(db, 'j4', '8', 'messenger:write ping:read');
    const { rows, kept, a, b } = await legacySamples(db);
    assert.equal(rows.length, 9);
    const before = await dayRows(db);
    await migrateToLatest(db, migrations);
    // Every column as it was; the revision (migration 0018) starts at 0.
    const days = before.map((day) => ({ ...day, revision: 0 }));

    assert.equal(kept.length, 6, 'three copies of a and two of b become one each');
    assert.deepEqual(
      await ownedRows(db),
      kept.map((row) => ({ ...row, owner: '42' })),
    );
    assert.deepEqual(await dayRows(db), days, 'the days keep what they counted: they cannot be recomputed');

    // The service on the upgraded database: a sample stored before is a duplicate, a new one is the writer's.
    const service = createPingService({
      db: executorOf(db),
      players: { uuidOf: async (player) => player },
      settings: config.ping,
    });
    deferClose(t, () => service.close());
    const { at, ping, lobby } = a;
    assert.deepEqual(
      await service.ingest(
        PLAYER,
        [
          { at, ping, lobby },
          { at: b.at, ping: b.ping, lobby },
        ],
        99n,
      ),
      {
        uuid: PLAYER,
        stored: 0,
        duplicates: 2,
      },
    );
    assert.deepEqual(await dayRows(db), days);
    assert.deepEqual(await service.ingest(PLAYER, [{ at: at + 2, ping, lobby }], 99n), {
      uuid: PLAYER,
      stored: 1,
      duplicates: 0,
    });
    assert.equal((await ownedRows(db)).at(-1)?.owner, '99');
  });

  it('gives them owner 0 when several owners held ping:write, or none did', async (t) => {
    for (const writers of [['42', '43'], []]) {
      const { db } = await previousVersion(t, backend);
      for (const [index, owner] of writers.entries())
        await issued(
          db,
          `w${index}`,
          owner,
          index === 0 ? 'ping:write' : 'ping:read ping:write messenger:log',
        );
      await issued(db, 'reader', '7', 'ping:read');
      const { kept } = await legacySamples(db);
      await migrateToLatest(db, migrations);
      assert.deepEqual(
        await ownedRows(db),
        kept.map((row) => ({ ...row, owner: '0' })),
        `writers: ${writers}`,
      );
    }
  });

  it('holds a sample once in the database, and marks one written without its owner as not recorded', async (t) => {
    const { db } = await previousVersion(t, backend);
    await issued(db, 'j1', '42', 'ping:write');
    const { a } = await legacySamples(db);
    await migrateToLatest(db, migrations);
    // As an instance of the previous version still running during a rolling deploy writes: no owner.
    const insertAsBefore = (sample: { player: string; at: number; ping: number; lobby: string }) =>
      sql`insert into ping_samples (player, at, ping, lobby)
          values (${sample.player}, ${sample.at}, ${sample.ping}, ${sample.lobby})`.execute(db);
    await assert.rejects(insertAsBefore(a), 'a sample stored already is refused by the database');
    await insertAsBefore({ ...a, at: a.at + 5 });
    const last = (await ownedRows(db)).at(-1);
    assert.equal(last?.at, a.at + 5);
    assert.equal(last?.owner, '0');
    await assert.rejects(
      sql`insert into ping_samples (player, at, ping, lobby, owner)
          values (${a.player}, ${a.at}, ${a.ping}, ${a.lobby}, ${'43'})`.execute(db),
      'whoever writes it',
    );
  });
});
