import assert from 'node:assert/strict';
import { after, before, it, type TestContext } from 'node:test';
import { sql } from 'kysely';
import { describeEachBackend } from '../../helpers/backends.js';
import { type FakeUpstream, FIXTURE_PLAYERS, startFakeUpstream } from '../../helpers/fake-upstream.js';
import { buildPlayerTestApp } from '../../helpers/player-app.js';
import { fixtureJson } from '../../helpers/player-fixtures.js';
import { rateLimitItem } from '../../helpers/replies.js';
import { issueToken } from '../../helpers/tokens.js';

/** Each lookup of a stale copy waits for its call, however slow a loaded machine makes it (no 1 s deadline). */
const WAIT_FOR_CALLS = '60000';

const { minikloon } = FIXTURE_PLAYERS;
const HOUR_MS = 3_600_000;

type Player = Record<string, unknown> & { stats: { Bedwars: Record<string, number> } };

/** The fixture player, with its Bedwars wins, login times and anything else given. */
function playerWith(changes: {
  wins?: number;
  login?: number;
  logout?: number;
  extra?: Record<string, unknown>;
}) {
  const player = structuredClone(fixtureJson('player.json').player) as Player;
  if (changes.wins !== undefined) player.stats.Bedwars.wins_bedwars = changes.wins;
  if (changes.login !== undefined) player.lastLogin = changes.login;
  if (changes.logout !== undefined) player.lastLogout = changes.logout;
  return Object.assign(player, changes.extra ?? {});
}

const problemName = (reply: { json(): { extra?: { name: string }[] } }) => reply.json().extra?.[0]?.name;
const fieldsOf = (reply: { json(): { extra?: { developer_reason: string }[] } }) =>
  (reply.json().extra ?? []).map((problem) => problem.developer_reason).join('; ');

describeEachBackend('player history', (backend) => {
  let fake: FakeUpstream;
  before(async () => {
    fake = await startFakeUpstream();
  });
  after(() => fake.close());

  /** An app whose player copies are never fresh: each lookup fetches, as a player seen across days would be. */
  async function setup(t: TestContext) {
    const test = await buildPlayerTestApp(t, fake, {
      backend,
      env: {
        CACHE_PLAYER_FRESH_SECONDS: '0',
        CACHE_STALE_DEADLINE_MS: WAIT_FOR_CALLS,
        CACHE_STALE_IF_ERROR_SECONDS: '0',
      },
    });
    /** The upstream now answers `player`; a lookup fetches and stores it. */
    const fetchAs = async (player: unknown) => {
      fake.setPlayer(minikloon.uuid, player);
      const reply = await test.get(`/player/${minikloon.uuid}`);
      assert.equal(reply.statusCode, 200, reply.body);
    };
    const rows = async () =>
      (
        await sql<{ seq: number; base_seq: number; size: number; fetched_by: string | null }>`
          select seq, base_seq, length(body) as size, fetched_by from player_history where uuid = ${minikloon.uuid} order by seq`.execute(
          test.app.db,
        )
      ).rows.map((row) => ({
        ...row,
        seq: Number(row.seq),
        base_seq: Number(row.base_seq),
        size: Number(row.size),
      }));
    return { ...test, fetchAs, rows };
  }

  it('stores a snapshot per fetch that found the player changed, nothing for equal data, compactly', async (t) => {
    const { fetchAs, rows, get } = await setup(t);
    await fetchAs(playerWith({ wins: 100 }));
    await fetchAs(playerWith({ wins: 100 }));
    assert.equal((await rows()).length, 1, 'equal data stores nothing');
    await fetchAs(playerWith({ wins: 101 }));
    await fetchAs(playerWith({ wins: 101 }));
    await fetchAs(playerWith({ wins: 102 }));
    const stored = await rows();
    assert.deepEqual(
      stored.map((row) => [row.seq, row.base_seq]),
      [
        [1, 1],
        [2, 1],
        [3, 1],
      ],
      'a full copy, then changes against it',
    );
    const playerBytes = Buffer.byteLength(JSON.stringify(fixtureJson('player.json').player));
    for (const row of stored.slice(1))
      assert.ok(row.size < playerBytes / 100, `a change of one value is tiny: ${row.size} bytes`);
    assert.ok((stored[0]?.size ?? 0) < playerBytes / 2, 'the full copy is compressed');
    assert.ok(
      stored.every((row) => row.fetched_by !== null),
      'each row records the owner whose lookup fetched it',
    );
    const history = await get(`/player/${minikloon.uuid}/history?fields=/stats/Bedwars/wins_bedwars`);
    assert.equal(history.statusCode, 200, history.body);
    assert.deepEqual(
      history.json().points.map((point: { values: Record<string, unknown> }) => point.values),
      [100, 101, 102].map((wins) => ({ '/stats/Bedwars/wins_bedwars': wins })),
    );
  });

  it('answers the fields asked for at each point, oldest first: any JSON value, null when absent, big integers exact', async (t) => {
    const { fetchAs, get } = await setup(t);
    await fetchAs(playerWith({ wins: 1 }));
    // A number beyond 2^53 keeps its digits (the upstream's text is stored as it came).
    await fetchAs(
      JSON.stringify(playerWith({ wins: 2 })).replace(
        '"stats":',
        '"huge":123456789012345678901,"a/b~c":{"x":[1,2]},"stats":',
      ),
    );
    const asked = [
      '/stats/Bedwars/wins_bedwars',
      '/a~1b~0c',
      '/a~1b~0c/x/1',
      '/nothing/here',
      '/displayname',
      '/huge',
    ];
    const reply = await get(
      `/player/${minikloon.uuid}/history?${asked.map((field) => `fields=${encodeURIComponent(field)}`).join('&')}`,
    );
    assert.equal(reply.statusCode, 200, reply.body);
    const body = reply.json();
    assert.equal(body.uuid, minikloon.uuid);
    assert.equal(body.points.length, 2);
    assert.ok(Date.parse(body.points[0].at) < Date.parse(body.points[1].at), 'oldest first');
    assert.deepEqual(body.points[0].values, {
      '/stats/Bedwars/wins_bedwars': 1,
      '/a~1b~0c': null,
      '/a~1b~0c/x/1': null,
      '/nothing/here': null,
      '/displayname': 'Minikloon',
      '/huge': null,
    });
    assert.deepEqual(body.points[1].values['/a~1b~0c'], { x: [1, 2] });
    assert.equal(body.points[1].values['/a~1b~0c/x/1'], 2);
    assert.match(reply.body, /"\/huge":123456789012345678901[,}]/, 'the digits of a big integer are kept');
  });

  it('thins evenly to the limit, keeping the first and the last, and reads a range given as days or times', async (t) => {
    const { fetchAs, get } = await setup(t);
    for (let wins = 0; wins < 10; wins++) await fetchAs(playerWith({ wins }));
    const url = `/player/${minikloon.uuid}/history?fields=/stats/Bedwars/wins_bedwars`;
    const winsOf = (reply: { json(): { points: { values: Record<string, number> }[] } }) =>
      reply.json().points.map((point) => point.values['/stats/Bedwars/wins_bedwars']);
    assert.deepEqual(winsOf(await get(`${url}&limit=4`)), [0, 3, 6, 9]);
    assert.deepEqual(winsOf(await get(`${url}&limit=1`)), [9], 'one point: the latest');
    const all = await get(url);
    assert.deepEqual(winsOf(all), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const times: string[] = all.json().points.map((point: { at: string }) => point.at);
    const [first = '', second = '', last = ''] = [times[0], times[1], times[9]];
    const days = `from=${first.slice(0, 10)}&to=${last.slice(0, 10)}`;
    assert.equal(winsOf(await get(`${url}&${days}`)).length, 10, 'a day is the whole of it');
    const tomorrow = new Date(Date.parse(last) + 24 * HOUR_MS).toISOString().slice(0, 10);
    assert.deepEqual(winsOf(await get(`${url}&from=${tomorrow}&to=${tomorrow}`)), []);
    assert.deepEqual(
      winsOf(await get(`${url}&from=${second}&to=${encodeURIComponent(second)}`)),
      [1],
      'times bound it to the millisecond, both ends in',
    );
    const future = await get(`${url}&from=${new Date(Date.now() + HOUR_MS).toISOString()}`);
    assert.equal(future.statusCode, 400, 'from after now, the default end');
  });

  it('reconstructs sessions from logins and logouts, with the numbers that moved in each, newest first', async (t) => {
    const { fetchAs, get } = await setup(t);
    const day = Date.UTC(2026, 10, 1);
    await fetchAs(playerWith({ wins: 10, login: day, logout: day + HOUR_MS }));
    await fetchAs(playerWith({ wins: 10, login: day + 5 * HOUR_MS, logout: day + HOUR_MS }));
    await fetchAs(playerWith({ wins: 12, login: day + 5 * HOUR_MS, logout: day + HOUR_MS }));
    // A first game of a mode in that session: its numbers count from 0.
    const firstDuel = { Duels: { wins: 3, modes: { bridge: { kills: 2 } }, title: 'none' } };
    await fetchAs(
      playerWith({ wins: 13, login: day + 5 * HOUR_MS, logout: day + 7 * HOUR_MS, extra: firstDuel }),
    );
    await fetchAs(
      playerWith({ wins: 13, login: day + 9 * HOUR_MS, logout: day + 7 * HOUR_MS, extra: firstDuel }),
    );
    const reply = await get(`/player/${minikloon.uuid}/sessions`);
    assert.equal(reply.statusCode, 200, reply.body);
    const { sessions } = reply.json();
    assert.deepEqual(sessions, [
      { start: new Date(day + 9 * HOUR_MS).toISOString(), end: null, changes: {} },
      {
        start: new Date(day + 5 * HOUR_MS).toISOString(),
        end: new Date(day + 7 * HOUR_MS).toISOString(),
        changes: { '/stats/Bedwars/wins_bedwars': 3, '/Duels/wins': 3, '/Duels/modes/bridge/kills': 2 },
      },
      { start: new Date(day).toISOString(), end: new Date(day + HOUR_MS).toISOString(), changes: {} },
    ]);
    assert.equal((await get(`/player/${minikloon.uuid}/sessions?limit=1`)).json().sessions.length, 1);
  });

  it('shows no session for a player who hides their online status', async (t) => {
    const { fetchAs, get } = await setup(t);
    const hidden = playerWith({ wins: 1 });
    delete hidden.lastLogin;
    delete hidden.lastLogout;
    await fetchAs(hidden);
    await fetchAs({
      ...hidden,
      stats: { ...hidden.stats, Bedwars: { ...hidden.stats.Bedwars, wins_bedwars: 2 } },
    });
    const reply = await get(`/player/${minikloon.uuid}/sessions`);
    assert.equal(reply.statusCode, 200, reply.body);
    assert.deepEqual(reply.json().sessions, []);
  });

  it('takes no session time the answer cannot write: a login or logout before 1970 or past the year 9999', async (t) => {
    const { fetchAs, get } = await setup(t);
    const day = Date.UTC(2026, 10, 1);
    const latest = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
    // The upstream's data is not checked: each of these is a number Hypixel could send.
    for (const [index, login, logout] of [
      [1, 1e300, day],
      [2, 8.64e15, 8.640000000000001e15],
      [3, latest + 1, latest],
      [4, -1, day],
      [5, latest, latest + 1],
      [6, day, -Number.MAX_VALUE],
    ] as const)
      await fetchAs(playerWith({ wins: index, login, logout }));
    const reply = await get(`/player/${minikloon.uuid}/sessions`);
    assert.equal(reply.statusCode, 200, reply.body);
    // Two sessions are left, each with no end (its logout is no time), each a game won since the snapshot before.
    const won = { '/stats/Bedwars/wins_bedwars': 1 };
    assert.deepEqual(reply.json().sessions, [
      { start: new Date(day).toISOString(), end: null, changes: won },
      { start: '9999-12-31T23:59:59.999Z', end: null, changes: won },
    ]);
  });

  it('answers 404 for a player with no snapshot and for an unknown username, 400 for bad queries', async (t) => {
    const { get, fetchAs } = await setup(t);
    for (const path of ['history?fields=/a', 'sessions']) {
      const never = await get(`/player/${FIXTURE_PLAYERS.builder.uuid}/${path}`);
      assert.equal(never.statusCode, 404, never.body);
      assert.equal(problemName(never), 'PLAYER_NOT_FOUND');
      // A UUID was given: the reason speaks of the history, not of a username.
      assert.equal(never.json().extra[0].reason, 'No history of this player is kept yet.');
      const unknown = await get(`/player/nobody_here/${path}`);
      assert.equal(unknown.statusCode, 404, unknown.body);
      assert.equal(unknown.json().extra[0].reason, 'No Minecraft player has this username.');
    }
    await fetchAs(playerWith({ wins: 1 }));
    const base = `/player/${minikloon.uuid}/history`;
    const bad: [string, RegExp][] = [
      ['', /fields/],
      ['?fields=', /fields/],
      ['?fields=stats', /fields\/0/],
      ['?fields=/a~2b', /fields\/0/],
      ['?fields=/ok,nope', /fields\/1/],
      [`?fields=${Array.from({ length: 51 }, (_, index) => `/f${index}`).join(',')}`, /1 to 50/],
      ['?fields=/a&from=2026-11-02&to=2026-11-01', /from.*must not be after/],
      ['?fields=/a&from=yesterday', /from/],
      ['?fields=/a&from=2026-02-30', /from/],
      ['?fields=/a&limit=0', /limit/],
      ['?fields=/a&limit=1001', /limit/],
      ['?fields=/a&other=1', /other/],
    ];
    for (const [query, field] of bad) {
      const reply = await get(`${base}${query}`);
      assert.equal(reply.statusCode, 400, `${query}: ${reply.body}`);
      assert.match(fieldsOf(reply), field, query);
    }
    const fiftyDistinct = Array.from({ length: 50 }, (_, index) => `/f${index}`);
    const duplicates = await get(`${base}?fields=${[...fiftyDistinct, '/f0', '/f1'].join(',')}`);
    assert.equal(duplicates.statusCode, 200, 'a pointer asked twice counts once');
    assert.equal(Object.keys(duplicates.json().points[0].values).length, 50);
    const sessions = await get(`/player/${minikloon.uuid}/sessions?from=2026-11-02&to=2026-11-01`);
    assert.equal(sessions.statusCode, 400);
  });

  it('stores one snapshot for concurrent fetches of the same data by two instances, seqs without gaps', async (t) => {
    const { fetchAs, rows, get, databaseUrl } = await setup(t);
    await fetchAs(playerWith({ wins: 1 }));
    fake.setPlayer(minikloon.uuid, playerWith({ wins: 2 }));
    // Another instance on the same database with its own cache: nothing makes the two fetch only once.
    const other = await buildPlayerTestApp(t, fake, {
      backend,
      databaseUrl,
      env: {
        CACHE_PLAYER_FRESH_SECONDS: '0',
        CACHE_STALE_DEADLINE_MS: WAIT_FOR_CALLS,
        CACHE_STALE_IF_ERROR_SECONDS: '0',
      },
    });
    const replies = await Promise.all(
      Array.from({ length: 8 }, (_, index) =>
        (index % 2 === 0 ? get : other.get)(`/player/${minikloon.uuid}`),
      ),
    );
    assert.deepEqual(
      replies.map((reply) => reply.statusCode),
      replies.map(() => 200),
    );
    assert.ok(fake.callsTo('/v2/player').length >= 2, 'both instances fetched');
    assert.deepEqual(
      (await rows()).map((row) => row.seq),
      [1, 2],
    );
  });

  it("lets any owner read a player's history (public data, one record for all)", async (t) => {
    const { fetchAs, get, app, config } = await setup(t);
    for (let wins = 0; wins < 5; wins++) await fetchAs(playerWith({ wins }));
    const otherOwner = await issueToken(app, config, { owner: 987654321098765432n, grants: ['player:read'] });
    const url = `/player/${minikloon.uuid}/history?fields=/stats/Bedwars/wins_bedwars`;
    const mine = await get(url);
    const theirs = await get(url, otherOwner);
    assert.equal(theirs.statusCode, 200, 'player data is public: the history is one for every owner');
    assert.equal(theirs.body, mine.body);
    const noGrant = await get(url, await issueToken(app, config, { grants: ['ping:read'] }));
    assert.equal(noGrant.statusCode, 403);
  });

  it('charges a reader per point, so that one owner reading long histories runs out while others read on', async (t) => {
    const test = await buildPlayerTestApp(t, fake, {
      backend,
      env: {
        CACHE_PLAYER_FRESH_SECONDS: '0',
        CACHE_STALE_DEADLINE_MS: WAIT_FOR_CALLS,
        WORK_BUDGET_UNITS: '40',
        WORK_BUDGET_WINDOW_SECONDS: '60',
        WORK_BUDGET_REFUSAL_DELAY_MS: '0',
      },
    });
    for (let wins = 0; wins < 10; wins++) {
      fake.setPlayer(minikloon.uuid, playerWith({ wins }));
      assert.equal((await test.get(`/player/${minikloon.uuid}`)).statusCode, 200);
    }
    const reader = await issueToken(test.app, test.config, { owner: 7n, grants: ['player:read'] });
    const other = await issueToken(test.app, test.config, { owner: 8n, grants: ['player:read'] });
    const url = `/player/${minikloon.uuid}/history?fields=/stats/Bedwars/wins_bedwars`;
    let served = 0;
    let refused: Awaited<ReturnType<typeof test.get>> | undefined;
    while (!refused && served < 40) {
      const reply = await test.get(url, reader);
      if (reply.statusCode === 200) served += 1;
      else refused = reply;
    }
    assert.ok(served <= 4, `40 units pay for about 3 reads of 10 points (1 + 10 each), not ${served}`);
    assert.equal(refused?.statusCode, 429);
    assert.equal(refused && problemName(refused), 'WORK_BUDGET_EXHAUSTED');
    assert.equal((await test.get(url, other)).statusCode, 200, 'another owner reads on');
  });

  it('stores nothing for a fetch that failed, and serves the stale copy without a snapshot', async (t) => {
    const test = await buildPlayerTestApp(t, fake, {
      backend,
      env: { CACHE_PLAYER_FRESH_SECONDS: '0', CACHE_STALE_DEADLINE_MS: WAIT_FOR_CALLS },
    });
    fake.setPlayer(minikloon.uuid, playerWith({ wins: 1 }));
    assert.equal((await test.get(`/player/${minikloon.uuid}`)).statusCode, 200);
    fake.setPlayer(minikloon.uuid, playerWith({ wins: 2 }));
    fake.misbehave({ failWith: 502 });
    const stale = await test.get(`/player/${minikloon.uuid}`);
    assert.equal(stale.headers['x-cache'], 'STALE');
    fake.misbehave({ garbage: true });
    assert.equal((await test.get(`/player/${minikloon.uuid}`)).headers['x-cache'], 'STALE');
    const history = await test.get(`/player/${minikloon.uuid}/history?fields=/stats/Bedwars/wins_bedwars`);
    assert.deepEqual(
      history
        .json()
        .points.map(
          (point: { values: Record<string, number> }) => point.values['/stats/Bedwars/wins_bedwars'],
        ),
      [1],
    );
  });

  it('charges a history read for the full copies it parses: a large player costs more than a typical one', async (t) => {
    const test = await buildPlayerTestApp(t, fake, {
      backend,
      // A day's window: the bucket refills 1,000 units a day, a unit in 86 s, so none between two reads even
      // on a loaded machine (100,000 a day was a unit in 0.86 s: a slow read of the large player, at load
      // 13, came back charged a unit less).
      env: {
        CACHE_PLAYER_FRESH_SECONDS: '0',
        CACHE_STALE_DEADLINE_MS: WAIT_FOR_CALLS,
        WORK_BUDGET_UNITS: '1000',
        WORK_BUDGET_WINDOW_SECONDS: '86400',
      },
    });
    const reader = await issueToken(test.app, test.config, { owner: 9n, grants: ['player:read'] });
    const charged = async (uuid: string, template: Record<string, unknown>) => {
      for (const networkExp of [1, 2]) {
        fake.setPlayer(uuid, { ...template, networkExp });
        assert.equal((await test.get(`/player/${uuid}`)).statusCode, 200);
      }
      const url = `/player/${uuid}/history?fields=/networkExp`;
      const before = Number(rateLimitItem((await test.get(url, reader)).headers.ratelimit, 'work')?.r);
      const after = Number(rateLimitItem((await test.get(url, reader)).headers.ratelimit, 'work')?.r);
      return before - after;
    };
    const typical = await charged(
      minikloon.uuid,
      fixtureJson('player.json').player as Record<string, unknown>,
    );
    const large = await charged(
      FIXTURE_PLAYERS.builder.uuid,
      fixtureJson('player-large.json').player as Record<string, unknown>,
    );
    assert.equal(typical, 1 + 2 + 1, 'the request, two points, one full copy of 46 KB');
    assert.equal(large, 1 + 2 + 8, 'the request, two points, one full copy of 488 KB: 8 units of 64 KiB');
  });
});
