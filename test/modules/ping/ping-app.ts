import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { createPingService } from '../../../src/modules/ping/ping.service.js';
import { executorOf } from '../../../src/platform/db/transactions.js';
import type { Backend } from '../../helpers/backends.js';
import { deferClose } from '../../helpers/build-test-app.js';
import { createFakeClock } from '../../helpers/fake-clock.js';
import type { FakeUpstream } from '../../helpers/fake-upstream.js';
import { openTestDatabase } from '../../helpers/open-database.js';
import { buildPlayerTestApp } from '../../helpers/player-app.js';
import { bearer } from '../../helpers/tokens.js';

/** The ping suites' shared parts: the service with a token for both ping grants, and expected days. */

export interface SentSample {
  readonly ping: number;
  readonly lobby: string;
  /** Epoch ms; sent as RFC 3339. */
  readonly at: number;
}

export interface DayRecord {
  avg: number;
  min: number;
  max: number;
  date: string;
  history: number[];
  last_lobby: string;
  last_ping: string;
}

export async function setupPing(
  t: TestContext,
  fake: FakeUpstream,
  backend: Backend,
  env: Record<string, string> = {},
) {
  const test = await buildPlayerTestApp(t, fake, { backend, env, grants: ['ping:read', 'ping:write'] });
  const postRaw = (player: string, payload: string, token = test.token) =>
    test.app.inject({
      method: 'POST',
      url: `/ping/${player}`,
      headers: { ...bearer(token), 'content-type': 'application/json' },
      payload,
    });
  const post = (
    player: string,
    samples: readonly (SentSample | Record<string, unknown>)[],
    token = test.token,
  ) => sendSamples(test.app, token, player, samples);
  const days = async (player: string, query = ''): Promise<DayRecord[]> => {
    const reply = await test.get(`/ping/${player}${query ? `?${query}` : ''}`);
    assert.equal(reply.statusCode, 200, reply.body);
    return reply.json().data;
  };
  const count = async (table: string) =>
    Number(
      (await sql<{ count: number }>`select count(*) as count from ${sql.table(table)}`.execute(test.app.db))
        .rows[0]?.count,
    );
  return { ...test, post, postRaw, days, count };
}

/**
 * The ping service alone on a fresh, migrated database of the backend, on a fake clock from `start`, with
 * the default settings; players resolve with `uuidOf` (a UUID as itself unless told).
 */
export async function pingServiceOnClock(
  t: TestContext,
  backend: Backend,
  {
    start,
    uuidOf = async (player: string) => player,
  }: { start: number; uuidOf?: (player: string) => Promise<string> },
) {
  const { db, config } = await openTestDatabase(t, backend.dialect);
  const clock = createFakeClock(start);
  const service = createPingService({
    db: executorOf(db),
    players: { uuidOf },
    settings: config.ping,
    now: clock.now,
  });
  deferClose(t, () => service.close());
  return { service, clock, settings: config.ping };
}

/** POST /ping/{player} to `app` with `token`: the samples' `at` as RFC 3339 when given in epoch ms. */
export const sendSamples = (
  app: FastifyInstance,
  token: string,
  player: string,
  samples: readonly (SentSample | Record<string, unknown>)[],
) =>
  app.inject({
    method: 'POST',
    url: `/ping/${player}`,
    headers: { ...bearer(token), 'content-type': 'application/json' },
    payload: JSON.stringify({
      samples: samples.map((sample) =>
        typeof sample.at === 'number' ? { ...sample, at: new Date(sample.at).toISOString() } : sample,
      ),
    }),
  });

/**
 * What endpoint 6 should say of these samples (in the order they were sent), computed here from the
 * samples themselves: per UTC day, newest day first.
 */
export function expectedDays(samples: readonly SentSample[], historyCap: number): DayRecord[] {
  const byDay = new Map<string, SentSample[]>();
  for (const sample of samples) {
    const day = new Date(sample.at).toISOString().slice(0, 10);
    byDay.set(day, [...(byDay.get(day) ?? []), sample]);
  }
  return [...byDay.entries()]
    .sort(([a], [b]) => (a < b ? 1 : -1))
    .map(([date, daySamples]) => {
      const pings = daySamples.map((sample) => sample.ping);
      const total = pings.reduce((sum, ping) => sum + ping, 0);
      // Half up to 2 decimals, in exact integers: total * 100 / count.
      const hundredths = (BigInt(total) * 200n + BigInt(pings.length)) / (2n * BigInt(pings.length));
      const ordered = daySamples
        .map((sample, order) => ({ ...sample, order }))
        .sort((a, b) => a.at - b.at || a.order - b.order);
      const last = ordered[ordered.length - 1] as SentSample;
      return {
        avg: Number(hundredths) / 100,
        min: Math.min(...pings),
        max: Math.max(...pings),
        date,
        history: ordered.slice(-historyCap).map((sample) => sample.ping),
        last_lobby: last.lobby,
        last_ping: new Date(last.at).toISOString(),
      };
    });
}
