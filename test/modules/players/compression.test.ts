import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { after, before, it, type TestContext } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describeEachBackend } from '../../helpers/backends.js';
import { type FakeUpstream, FIXTURE_PLAYERS, startFakeUpstream } from '../../helpers/fake-upstream.js';
import { buildPlayerTestApp } from '../../helpers/player-app.js';
import { eventually } from '../../helpers/poll.js';
import { bearer } from '../../helpers/tokens.js';

const LARGE = FIXTURE_PLAYERS.builder.uuid;
/** The bytes of Hypixel's reply for the large player, as captured. */
const UPSTREAM_REPLY_BYTES = statSync(
  new URL('../../fixtures/hypixel/player-large.json', import.meta.url),
).size;
const TYPICAL = FIXTURE_PLAYERS.minikloon.uuid;

const decode = (encoding: string | undefined, bytes: Buffer): Buffer =>
  encoding === 'br' ? brotliDecompressSync(bytes) : encoding === 'gzip' ? gunzipSync(bytes) : bytes;

describeEachBackend(
  'compressed answers',
  (backend) => {
    let fake: FakeUpstream;
    before(async () => {
      fake = await startFakeUpstream();
    });
    after(() => fake.close());

    async function setup(t: TestContext) {
      const test = await buildPlayerTestApp(t, fake, { backend });
      const fetch = (url: string, acceptEncoding?: string) =>
        test.app.inject({
          method: 'GET',
          url,
          headers: {
            ...bearer(test.token),
            ...(acceptEncoding ? { 'accept-encoding': acceptEncoding } : {}),
          },
        });
      return { ...test, fetch };
    }

    it('serves a cached player in the encoding the request prefers, the same bytes once decoded', async (t) => {
      const { fetch } = await setup(t);
      const identity = await fetch(`/player/${LARGE}`);
      assert.equal(identity.statusCode, 200);
      assert.equal(identity.headers['content-encoding'], undefined);
      assert.equal(identity.headers.vary, 'accept-encoding');
      const cases: [string, string | undefined][] = [
        ['br', 'br'],
        ['gzip', 'gzip'],
        ['gzip, deflate, br', 'br'],
        ['br;q=0.5, gzip', 'gzip'],
        ['br;q=0, gzip;q=0', undefined],
        ['identity', undefined],
        ['deflate', undefined],
        ['*', 'br'],
      ];
      for (const [accepted, expected] of cases) {
        const reply = await fetch(`/player/${LARGE}`, accepted);
        assert.equal(reply.statusCode, 200, accepted);
        assert.equal(reply.headers['x-cache'], 'HIT', accepted);
        assert.equal(reply.headers['content-encoding'], expected, accepted);
        assert.equal(reply.headers.vary, 'accept-encoding', accepted);
        assert.equal(Number(reply.headers['content-length']), reply.rawPayload.length, `${accepted}: length`);
        assert.ok(decode(expected, reply.rawPayload).equals(identity.rawPayload), `${accepted}: same bytes`);
        // The service keeps Hypixel's player without its whitespace (half the 917 KB reply), which leaves
        // less to squeeze: a quarter of that, about an eighth of what Hypixel sent.
        if (expected) {
          assert.ok(
            reply.rawPayload.length <= identity.rawPayload.length * 0.25,
            `${accepted}: ${reply.rawPayload.length} of ${identity.rawPayload.length} bytes`,
          );
          assert.ok(
            reply.rawPayload.length <= UPSTREAM_REPLY_BYTES * 0.15,
            `${accepted}: vs the upstream's reply`,
          );
        }
      }
      assert.equal(fake.callsTo('/v2/player').length, 1, 'compressed answers are cache hits too');
    });

    it('compresses on the first request that asks for every asker at once, then keeps a smaller Brotli copy made in the background', async (t) => {
      const { app, fetch } = await setup(t);
      const identity = (await fetch(`/player/${TYPICAL}`)).rawPayload;
      const replies = await Promise.all(Array.from({ length: 5 }, () => fetch(`/player/${TYPICAL}`, 'br')));
      for (const reply of replies) {
        assert.equal(reply.statusCode, 200);
        assert.equal(reply.headers['content-encoding'], 'br');
      }
      // One quick compression shared by the five; a reply slow enough to come after the background one
      // may already carry the smaller copy.
      for (const reply of replies) assert.ok(brotliDecompressSync(reply.rawPayload).equals(identity));
      const first = replies[0]?.rawPayload;
      assert.ok(first);
      assert.ok(new Set(replies.map((reply) => reply.rawPayload.toString('base64'))).size <= 2);

      const refinements = async () =>
        (await app.inject({ method: 'GET', url: '/metrics' })).body
          .split('\n')
          .filter((line) => line.startsWith('cache_variant_refinements_total{'));
      await eventually('the Brotli copy made smaller', async () =>
        (await refinements()).includes(
          'cache_variant_refinements_total{resource="player",outcome="smaller"} 1',
        ),
      );
      const smaller = (await fetch(`/player/${TYPICAL}`, 'br')).rawPayload;
      const largest = Math.max(...replies.map((reply) => reply.rawPayload.length));
      assert.ok(smaller.length < largest, `${smaller.length} < ${largest}`);
      assert.ok(brotliDecompressSync(smaller).equals(identity), 'the same bytes once decoded');
      assert.ok((await fetch(`/player/${TYPICAL}`, 'br')).rawPayload.equals(smaller), 'then kept');
      // gzip's first copy is within 1.5% of its smallest: made once, never again.
      await fetch(`/player/${TYPICAL}`, 'gzip');
      assert.deepEqual(await refinements(), [
        'cache_variant_refinements_total{resource="player",outcome="smaller"} 1',
      ]);
    });

    it('closes while a Brotli copy is being made smaller, waiting for it rather than failing', async (t) => {
      const { app, fetch } = await setup(t);
      // The large player's smallest Brotli copy takes about half a second: the close comes during it.
      assert.equal((await fetch(`/player/${LARGE}`, 'br')).statusCode, 200);
      await app.close();
    });

    it('compresses other large JSON answers on the fly, and leaves small ones as they are', async (t) => {
      const { app } = await setup(t);
      // The metrics (several KiB of text), by the same reading of Accept-Encoding as the cached values.
      for (const [acceptEncoding, expected] of [
        ['gzip', 'gzip'],
        ['gzip;q=0, *', 'br'],
        ['br;q=0, *', 'gzip'],
        ['BR', 'br'],
        ['x-gzip', 'gzip'],
        ['br;q=0, gzip;q=0, *', undefined],
      ] as const) {
        const metrics = await app.inject({
          method: 'GET',
          url: '/metrics',
          headers: { 'accept-encoding': acceptEncoding },
        });
        assert.equal(metrics.statusCode, 200);
        assert.equal(metrics.headers['content-encoding'], expected, acceptEncoding);
        const text =
          expected === 'gzip'
            ? gunzipSync(metrics.rawPayload)
            : expected === 'br'
              ? brotliDecompressSync(metrics.rawPayload)
              : metrics.rawPayload;
        assert.match(text.toString(), /http_requests_total/);
      }
      const health = await app.inject({
        method: 'GET',
        url: '/health',
        headers: { 'accept-encoding': 'gzip' },
      });
      assert.equal(health.headers['content-encoding'], undefined, 'under 1 KiB: not worth it');
      const notFound = await app.inject({
        method: 'GET',
        url: '/nowhere',
        headers: { 'accept-encoding': 'br' },
      });
      assert.equal(notFound.statusCode, 404);
      assert.equal(notFound.json().success, false);
    });
  },
  { caches: true },
);
