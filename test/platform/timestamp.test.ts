import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { parseTimestamp, Timestamp } from '../../src/platform/timestamp.js';
import { buildTestApp, suiteScope } from '../helpers/build-test-app.js';

describe('RFC 3339 times', () => {
  it('reads what Date.parse reads, exactly, with offsets and fractions', () => {
    for (const text of [
      '2026-11-22T03:05:17.123Z',
      '2026-11-22T03:05:17Z',
      '2026-11-22t03:05:17z',
      '2026-11-22T03:05:17.1+02:00',
      '2026-11-22T03:05:17.999-11:30',
      '2024-02-29T00:00:00Z',
      '1970-01-01T00:00:00Z',
      '0001-01-01T00:00:00Z',
      '0099-12-31T23:59:59.999Z',
      '0000-01-01T00:00:00Z',
      '9999-12-31T23:59:59.999Z',
    ]) {
      assert.equal(parseTimestamp(text), Date.parse(text), text);
    }
    assert.equal(parseTimestamp('2026-11-22T03:05:17.123456789Z'), Date.parse('2026-11-22T03:05:17.123Z'));
    assert.equal(
      parseTimestamp('2026-11-22T03:05:17.1234567890123Z'),
      Date.parse('2026-11-22T03:05:17.123Z'),
      'RFC 3339 allows any number of fraction digits',
    );
  });

  it('reads a leap second as the last millisecond of its minute, and refuses times that do not exist', () => {
    assert.equal(parseTimestamp('2016-12-31T23:59:60Z'), Date.parse('2016-12-31T23:59:59.999Z'));
    assert.equal(parseTimestamp('2016-12-31T23:59:60.5Z'), Date.parse('2016-12-31T23:59:59.999Z'));
    assert.equal(
      parseTimestamp('2026-11-23T00:59:60+01:00'),
      Date.parse('2026-11-22T23:59:59.999Z'),
      'on the day its writer meant, in UTC',
    );
    for (const text of [
      '2026-02-29T00:00:00Z',
      '2026-04-31T00:00:00Z',
      '2026-13-01T00:00:00Z',
      '2026-00-01T00:00:00Z',
      '2026-11-22T24:00:00Z',
      '2026-11-22T23:60:00Z',
      '2026-11-22T23:59:61Z',
      '2026-11-22T03:05:17',
      '2026-11-22T03:05:17+24:00',
      '2026-11-22T03:05:17+02:60',
      '2026-11-22',
      '+002026-11-22T03:05:17Z',
      ' 2026-11-22T03:05:17Z',
      '',
      42,
    ]) {
      assert.equal(parseTimestamp(text), undefined, String(text));
    }
  });

  describe('as a schema', () => {
    let app: FastifyInstance;
    const seen: unknown[] = [];
    const scope = suiteScope();
    before(async () => {
      ({ app } = await buildTestApp(scope));
      const At = Timestamp({ description: 'A time.' });
      app.post(
        '/test/at',
        {
          schema: {
            querystring: Type.Object({ since: Type.Optional(At) }),
            body: Type.Object({ items: Type.Array(Type.Object({ at: At })) }),
          },
        },
        async (request) => {
          seen.push({ ...(request.query as object) }, request.body);
          return {};
        },
      );
    });

    it('hands the handler epoch milliseconds, in a query and deep in a body', async () => {
      seen.length = 0;
      const reply = await app.inject({
        method: 'POST',
        url: '/test/at?since=2016-12-31T23:59:60Z',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({
          items: [{ at: '2026-11-22T03:05:17.123Z' }, { at: '2026-11-22T04:05:17+01:00' }],
        }),
      });
      assert.equal(reply.statusCode, 200, reply.body);
      assert.deepEqual(seen, [
        { since: Date.parse('2016-12-31T23:59:59.999Z') },
        {
          items: [{ at: Date.parse('2026-11-22T03:05:17.123Z') }, { at: Date.parse('2026-11-22T03:05:17Z') }],
        },
      ]);
    });

    it('refuses anything else with one problem per field, naming it', async () => {
      const reply = await app.inject({
        method: 'POST',
        url: '/test/at',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({
          items: [{ at: '2026-02-30T00:00:00Z' }, { at: 1795316717000 }, { at: 'now' }],
        }),
      });
      assert.equal(reply.statusCode, 400);
      assert.deepEqual(
        reply.json().extra.map((problem: { developer_reason: string }) => problem.developer_reason),
        [0, 1, 2].map(
          (index) => `body/items/${index}/at must be an RFC 3339 time such as 2026-11-22T03:05:17.123Z`,
        ),
      );
    });
  });
});
