import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { setImmediate } from 'node:timers/promises';
import { gunzipSync } from 'node:zlib';
import { sql } from 'kysely';
import { describeEachBackend } from '../../helpers/backends.js';
import { buildTestApp } from '../../helpers/build-test-app.js';
import { type FakeUpstream, FIXTURE_PLAYERS, startFakeUpstream } from '../../helpers/fake-upstream.js';
import { bearer, issueToken } from '../../helpers/tokens.js';
import { expectedDays, type SentSample, sendSamples, setupPing } from './ping-app.js';

/*
 * Endpoint 6 keeps each player's days and its answers in memory while the player's revision does not move:
 * these tests hold it to answering exactly what the database says, whoever wrote it and whenever.
 */

const PLAYER = FIXTURE_PLAYERS.minikloon.uuid;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Midnight UTC of the day `days` ago. */
const midnight = (daysAgo: number) => {
  const today = new Date();
  return Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate()) - daysAgo * DAY;
};
const dateOf = (at: number) => new Date(at).toISOString().slice(0, 10);

/**
 * A sample on each of the last `days` days (an hour after midnight; today's halfway to now when that hour
 * has not come yet, since a sample from the future is refused), pings from `base`.
 */
const spread = (days: number, base: number): SentSample[] =>
  Array.from({ length: days }, (_, ago) => ({
    ping: base + ago,
    lobby: `l${ago}`,
    at: midnight(ago) + (ago === 0 ? Math.min(HOUR, Math.floor((Date.now() - midnight(0)) / 2)) : HOUR),
  }));

describeEachBackend('ping history kept in memory (endpoint 6)', (backend) => {
  let fake: FakeUpstream;
  before(async () => {
    fake = await startFakeUpstream();
  });
  after(() => fake.close());

  it('answers with an ETag, 304 for a client that has it, and a new answer and ETag once a sample lands', async (t) => {
    const { post, get, app, token } = await setupPing(t, fake, backend);
    // Enough values to be compressed (1 KiB or more).
    const sent = [0, 1, 2].flatMap((ago) =>
      Array.from({ length: 100 }, (_, index) => ({
        ping: index,
        lobby: 'l',
        at: midnight(ago) + index * 1000,
      })),
    );
    assert.equal((await post(PLAYER, sent)).statusCode, 200);
    const first = await get(`/ping/${PLAYER}`);
    assert.equal(first.statusCode, 200);
    const etag = String(first.headers.etag);
    assert.match(etag, /^"[^"]+"$/);
    assert.deepEqual(first.json().data, expectedDays(sent, 1440));

    const again = (headers: Record<string, string>) =>
      app.inject({ method: 'GET', url: `/ping/${PLAYER}`, headers: { ...bearer(token), ...headers } });
    const unchanged = await again({ 'if-none-match': etag });
    assert.equal(unchanged.statusCode, 304);
    assert.equal(unchanged.body, '');
    assert.equal(unchanged.headers.etag, etag);
    assert.equal((await again({ 'if-none-match': `W/"other", ${etag}` })).statusCode, 304, 'a list, weakly');
    assert.equal((await again({ 'if-none-match': '"other"' })).statusCode, 200);

    // Compressed: a copy with its own ETag, the same document (a 304 for either tag).
    const zipped = await again({ 'accept-encoding': 'gzip' });
    assert.equal(zipped.headers['content-encoding'], 'gzip');
    assert.equal(zipped.headers.etag, `${etag.slice(0, -1)}-gzip"`);
    assert.equal(gunzipSync(zipped.rawPayload).toString(), first.body);
    assert.equal((await again({ 'accept-encoding': 'gzip', 'if-none-match': etag })).statusCode, 304);

    // A late sample in a closed day: the day changes, and so does every answer that shows it.
    const late = { ping: 7, lobby: 'late', at: midnight(2) + 30 * 60_000 };
    assert.equal((await post(PLAYER, [late])).statusCode, 200);
    const changed = await again({ 'if-none-match': etag });
    assert.equal(changed.statusCode, 200);
    assert.notEqual(changed.headers.etag, etag);
    assert.deepEqual(changed.json().data, expectedDays([...sent, late], 1440));
    const rezipped = await again({ 'accept-encoding': 'gzip' });
    assert.deepEqual(JSON.parse(gunzipSync(rezipped.rawPayload).toString()), changed.json());

    // A batch that stores nothing new (all duplicates) moves nothing: the ETag stays.
    assert.equal((await post(PLAYER, [late])).statusCode, 200);
    assert.equal((await again({ 'if-none-match': String(changed.headers.etag) })).statusCode, 304);
  });

  it('never answers 304 with one player’s or one range’s ETag for another, though they share a revision', async (t) => {
    // One group commit writes both players: one revision for both.
    const { post, get, app, token } = await setupPing(t, fake, backend, { GROUP_COMMIT_LINGER_MS: '100' });
    const other = `${'0'.repeat(31)}1`;
    const [a, b] = await Promise.all([
      post(PLAYER, spread(2, 10)),
      post(other, [{ ping: 1, lobby: 'x', at: midnight(0) + 1 }]),
    ]);
    assert.equal(a.statusCode, 200);
    assert.equal(b.statusCode, 200);
    const tagOf = async (url: string) => String((await get(url)).headers.etag);
    const tags = [`/ping/${PLAYER}`, `/ping/${other}`, `/ping/${PLAYER}?limit=1`, `/ping/${other}?limit=1`];
    const etags = await Promise.all(tags.map(tagOf));
    assert.equal(new Set(etags).size, tags.length, etags.join(' '));
    for (const [index, url] of tags.entries())
      for (const [otherIndex, etag] of etags.entries()) {
        const reply = await app.inject({
          method: 'GET',
          url,
          headers: { ...bearer(token), 'if-none-match': etag },
        });
        assert.equal(reply.statusCode, index === otherIndex ? 304 : 200, `${url} with ${etag}`);
      }
  });

  it('reads back a day changed without its revision (an instance of an older version) once the revision moves', async (t) => {
    const { post, days, app } = await setupPing(t, fake, backend);
    const sent = spread(3, 300);
    assert.equal((await post(PLAYER, sent)).statusCode, 200);
    await days(PLAYER);
    // What a version before revisions writes: the day's statistics and history, the revision left as it was.
    const closed = dateOf(midnight(2));
    const lateAt = midnight(2) + 20 * HOUR;
    await sql`update ping_days set samples = samples + 1, total = total + 1, min = 1, last_at = ${lateAt},
      last_lobby = 'old-version', history = '[302,1]', history_at = ${JSON.stringify([midnight(2) + HOUR, lateAt])}
      where player = ${PLAYER} and day = ${closed}`.execute(app.db);
    const today = { ping: 5, lobby: 'now', at: Date.now() - 100 };
    assert.equal((await post(PLAYER, [today])).statusCode, 200);
    const old = { ping: 1, lobby: 'old-version', at: lateAt };
    assert.deepEqual(await days(PLAYER), expectedDays([...sent, old, today], 1440));
  });

  it('reads every day again when the revision goes back (a database restored or replaced)', async (t) => {
    const { post, days, app } = await setupPing(t, fake, backend);
    const sent = spread(3, 400);
    assert.equal((await post(PLAYER, sent)).statusCode, 200);
    assert.deepEqual(await days(PLAYER), expectedDays(sent, 1440));
    await sql`delete from ping_days where player = ${PLAYER}`.execute(app.db);
    await sql`delete from ping_players where player = ${PLAYER}`.execute(app.db);
    assert.deepEqual(await days(PLAYER), []);
    const again = { ping: 7, lobby: 'again', at: Date.now() - 100 };
    assert.equal((await post(PLAYER, [again])).statusCode, 200);
    assert.deepEqual(await days(PLAYER), expectedDays([again], 1440));
  });

  it('takes any If-None-Match without harm: garbage is a 200, `*` a 304', async (t) => {
    const { post, app, token } = await setupPing(t, fake, backend);
    assert.equal((await post(PLAYER, spread(2, 60))).statusCode, 200);
    const withHeader = (value: string) =>
      app.inject({
        method: 'GET',
        url: `/ping/${PLAYER}`,
        headers: { ...bearer(token), 'if-none-match': value },
      });
    for (const value of ['"unterminated', 'W/', ',,,', '""', `"${'x'.repeat(8000)}"`, '\u0000"a"'])
      assert.equal((await withHeader(value)).statusCode, 200, value.slice(0, 20));
    const any = await withHeader('*');
    assert.equal(any.statusCode, 304);
    assert.equal(any.body, '');
  });

  it('keeps the answers of each range apart, each exact after every write', async (t) => {
    const { post, days } = await setupPing(t, fake, backend);
    const sent = spread(6, 10);
    assert.equal((await post(PLAYER, sent)).statusCode, 200);
    const ranges = [
      '',
      'limit=2',
      `from=${dateOf(midnight(4))}&to=${dateOf(midnight(1))}`,
      `from=${dateOf(midnight(0))}`,
    ];
    const expectIn = (query: string, all: readonly SentSample[]) => {
      const params = new URLSearchParams(query);
      const from = params.get('from');
      const to = params.get('to');
      const limit = params.get('limit');
      const within = expectedDays(all, 1440).filter(
        ({ date }) => (from === null || date >= from) && (to === null || date <= to),
      );
      return limit === null ? within : within.slice(0, Number(limit));
    };
    for (const query of ranges) assert.deepEqual(await days(PLAYER, query), expectIn(query, sent), query);
    const more = [
      { ping: 1, lobby: 'today', at: Date.now() - 1000 },
      { ping: 2, lobby: 'three-days-ago', at: midnight(3) + 2 * HOUR },
    ];
    assert.equal((await post(PLAYER, more)).statusCode, 200);
    for (const query of ranges)
      assert.deepEqual(await days(PLAYER, query), expectIn(query, [...sent, ...more]), query);
  });

  it('sees at once what another instance on the same database wrote, a closed day or today', async (t) => {
    const reader = await setupPing(t, fake, backend);
    const writer = await buildTestApp(t, { backend, upstream: fake, databaseUrl: reader.databaseUrl });
    const writerToken = await issueToken(writer.app, writer.config, { grants: ['ping:write'] });
    const sent = spread(4, 50);
    assert.equal((await reader.post(PLAYER, sent)).statusCode, 200);
    assert.deepEqual(await reader.days(PLAYER), expectedDays(sent, 1440));
    assert.deepEqual(await reader.days(PLAYER, 'limit=1'), expectedDays(sent, 1440).slice(0, 1));

    const elsewhere = [
      { ping: 3, lobby: 'elsewhere-late', at: midnight(3) + 3 * HOUR },
      { ping: 4, lobby: 'elsewhere-today', at: Date.now() - 500 },
    ];
    assert.equal((await sendSamples(writer.app, writerToken, PLAYER, elsewhere)).statusCode, 200);
    assert.deepEqual(await reader.days(PLAYER), expectedDays([...sent, ...elsewhere], 1440));
    assert.deepEqual(
      await reader.days(PLAYER, 'limit=1'),
      expectedDays([...sent, ...elsewhere], 1440).slice(0, 1),
    );
  });

  it('reads again only the days that changed: a closed day kept is not read back', async (t) => {
    const { post, days, app } = await setupPing(t, fake, backend);
    const sent = spread(3, 200);
    assert.equal((await post(PLAYER, sent)).statusCode, 200);
    const kept = await days(PLAYER);
    // Behind the service's back, a closed day's history changes without its revision (no writer does this):
    // a reader that read every day again would show it.
    const closed = dateOf(midnight(2));
    await sql`update ping_days set history = '[999]' where player = ${PLAYER} and day = ${closed}`.execute(
      app.db,
    );
    const today = { ping: 5, lobby: 'now', at: Date.now() - 100 };
    assert.equal((await post(PLAYER, [today])).statusCode, 200);
    const shown = await days(PLAYER);
    assert.deepEqual(shown, expectedDays([...sent, today], 1440), 'the closed day as kept, today read again');
    assert.deepEqual(
      shown.find((day) => day.date === closed),
      kept.find((day) => day.date === closed),
    );
  });

  it('answers the same with no memory for history (PING_HISTORY_CACHE_MAX_BYTES=0)', async (t) => {
    const { post, days, get } = await setupPing(t, fake, backend, { PING_HISTORY_CACHE_MAX_BYTES: '0' });
    const sent = spread(3, 30);
    assert.equal((await post(PLAYER, sent)).statusCode, 200);
    assert.deepEqual(await days(PLAYER), expectedDays(sent, 1440));
    const more = { ping: 9, lobby: 'x', at: midnight(1) + 5 * HOUR };
    assert.equal((await post(PLAYER, [more])).statusCode, 200);
    assert.deepEqual(await days(PLAYER), expectedDays([...sent, more], 1440));
    const first = await get(`/ping/${PLAYER}`);
    assert.equal((await get(`/ping/${PLAYER}`)).headers.etag, first.headers.etag, 'one revision, one ETag');
  });

  it('never shows a reader a day going back while samples land concurrently, and ends exact', async (t) => {
    const { post, days } = await setupPing(t, fake, backend);
    const start = midnight(0);
    const sent: SentSample[] = [];
    let seen = 0;
    let writing = true;
    const writes = (async () => {
      for (let index = 0; index < 40; index++) {
        const sample = { ping: index, lobby: 'w', at: start + index };
        sent.push(sample);
        const reply = await post(PLAYER, [sample]);
        assert.equal(reply.statusCode, 200, reply.body);
      }
    })().finally(() => {
      writing = false;
    });
    const reads = Array.from({ length: 4 }, async () => {
      let last = 0;
      while (writing) {
        const [day] = await days(PLAYER);
        const length = day?.history.length ?? 0;
        assert.ok(length >= last, `a reader saw ${length} samples after ${last}`);
        assert.deepEqual(
          day?.history ?? [],
          [...Array(length).keys()],
          'a prefix of what was sent, in order',
        );
        last = length;
        seen++;
        // Injected requests served from memory (and SQLite, synchronous) never leave the microtask queue: give
        // the writer's turn back, as sockets would.
        await setImmediate();
      }
    });
    await Promise.all([writes, ...reads]);
    assert.ok(seen > 0);
    assert.deepEqual(await days(PLAYER), expectedDays(sent, 1440));
  });
});
