import assert from 'node:assert/strict';
import { it } from 'node:test';
import Fastify from 'fastify';
import { createPingHistoryReplies } from '../../../src/modules/ping/ping.reply.js';
import type { PingDay } from '../../../src/modules/ping/ping.service.js';

/** `count` days of a long history each: a body well over the compression threshold. */
const daysOf = (count: number): PingDay[] =>
  Array.from({ length: count }, (_, index) => ({
    day: `2026-01-${String(index + 1).padStart(2, '0')}`,
    avg: 50,
    min: 1,
    max: 99,
    lastAt: Date.UTC(2026, 0, index + 1, 12),
    lastLobby: 'l',
    historyJson: JSON.stringify(Array.from({ length: 500 }, (_, value) => (value * 7919) % 400)),
    revision: 1,
    samples: 500,
  }));

async function serving(maxBytes: number, days: readonly PingDay[]) {
  const replies = createPingHistoryReplies(maxBytes);
  const app = Fastify();
  app.get('/h', { compress: false }, (request, reply) =>
    replies.send(request, reply, { uuid: 'p', revision: 1, days }, {}),
  );
  await app.ready();
  const get = (headers: Record<string, string> = {}) => app.inject({ method: 'GET', url: '/h', headers });
  return { replies, app, get };
}

it('counts an answer’s compressed copies against the bound once they are made', async (t) => {
  const { replies, app, get } = await serving(16 * 1024 * 1024, daysOf(20));
  t.after(() => app.close());
  const identity = await get();
  const bodyOnly = replies.keptBytes();
  assert.ok(bodyOnly >= identity.rawPayload.length, `${bodyOnly} counts the body`);
  const zipped = await get({ 'accept-encoding': 'gzip' });
  assert.equal(zipped.headers['content-encoding'], 'gzip');
  // The copy is counted once it is made (its promise settles before the answer goes out).
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(replies.keptBytes(), bodyOnly + zipped.rawPayload.length);
});

it('keeps no answer past its bound: one whose copies outgrow it is let go, and still answered', async (t) => {
  const days = daysOf(20);
  const probe = await serving(16 * 1024 * 1024, days);
  const bodyBytes = (await probe.get()).rawPayload.length;
  await probe.app.close();
  // Room for the body, not for the body and its copy.
  const { replies, app, get } = await serving(bodyBytes + 1024, days);
  t.after(() => app.close());
  assert.equal((await get()).statusCode, 200);
  assert.ok(replies.keptBytes() > 0);
  const zipped = await get({ 'accept-encoding': 'gzip' });
  assert.equal(zipped.statusCode, 200);
  await new Promise((resolve) => setImmediate(resolve));
  assert.ok(replies.keptBytes() <= bodyBytes + 1024, `${replies.keptBytes()} within the bound`);
  assert.equal((await get()).rawPayload.length, bodyBytes);
});
