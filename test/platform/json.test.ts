import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../../src/platform/errors.js';
import { LongInteger, parseJsonBody } from '../../src/platform/json.js';
import { MAX_SNOWFLAKE, Snowflake, SnowflakeOut } from '../../src/platform/snowflake.js';
import { buildTestApp, suiteScope } from '../helpers/build-test-app.js';

describe('exact JSON', () => {
  describe('parseJsonBody', () => {
    it('keeps integers beyond 2^53 as their exact digits', () => {
      assert.deepEqual(parseJsonBody('{"id": 18446744073709551615, "n": 12, "f": 1.5}', 64), {
        id: new LongInteger('18446744073709551615'),
        n: 12,
        f: 1.5,
      });
    });

    it('treats an empty body as no body', () => {
      assert.equal(parseJsonBody('', 64), undefined);
      assert.equal(parseJsonBody('  \n', 64), undefined);
    });

    it('refuses duplicate keys and __proto__ at any depth', () => {
      assert.throws(() => parseJsonBody('{"a":1,"a":2}', 64), /Malformed JSON/);
      assert.throws(() => parseJsonBody('{"a":[{"b":{"__proto__":{"polluted":true}}}]}', 64), /__proto__/);
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
    });

    it('refuses nesting deeper than the limit before parsing, at any depth, without recursion', () => {
      const nested = (depth: number) => `${'[{"a":'.repeat(depth)}1${'}]'.repeat(depth)}`;
      assert.deepEqual(parseJsonBody(nested(16), 32), parseJsonBody(nested(16), 64));
      for (const depth of [17, 1000, 8600, 100_000, 1_000_000]) {
        assert.throws(
          () => parseJsonBody(nested(depth), 32),
          (error: unknown) => error instanceof AppError && error.problems[0]?.kind.name === 'BODY_TOO_DEEP',
          `depth ${depth * 2}`,
        );
      }
    });

    it('refuses numbers beyond a double instead of keeping them as Infinity', () => {
      for (const text of ['{"a":1e400}', '{"a":[-1e999]}']) {
        assert.throws(
          () => parseJsonBody(text, 64),
          (error: unknown) =>
            error instanceof AppError &&
            error.problems[0]?.kind.name === 'MALFORMED_JSON' &&
            error.problems[0]?.developerReason === 'body holds a number too large for a JSON number here',
          text,
        );
      }
    });

    it('says where malformed JSON goes wrong without quoting any of it', () => {
      const secret = 'SECRETTOKEN';
      for (const text of [
        `{"t":"${secret}\\uQZ9X"}`,
        `{"t":"\\u${secret}"}`,
        `{"t":"${secret}\\q"}`,
        `{"t":-${secret}}`,
        `{"t":1${secret}}`,
        `{"t":"${secret}`,
        `{"t":"a\n${secret}"}`,
        `{"${secret}":1,"${secret}":2}`,
        `{"t":1}${secret}`,
        `{"t":tru${secret}}`,
      ]) {
        assert.throws(
          () => parseJsonBody(text, 64),
          (error: unknown) => {
            if (!(error instanceof AppError)) return false;
            const said = JSON.stringify(
              error.problems.map(({ reason, developerReason }) => [reason, developerReason]),
            );
            assert.doesNotMatch(said, /SECRET|QZ9X|tru/, text);
            assert.match(said, /at character \d+/, text);
            return true;
          },
          text,
        );
      }
    });

    it('counts only structure, not brackets inside strings', () => {
      const text = JSON.stringify({ a: '[[[[[[[[{{{{{{{{', b: ['\\"[[[['] });
      assert.deepEqual(parseJsonBody(text, 2), { a: '[[[[[[[[{{{{{{{{', b: ['\\"[[[['] });
      assert.throws(() => parseJsonBody('{"a":[[1]]}', 2), /nested/);
    });
  });

  describe('64-bit IDs through a route', () => {
    let app: FastifyInstance;
    const seen: unknown[] = [];
    const scope = suiteScope();
    before(async () => {
      ({ app } = await buildTestApp(scope));
      app.post(
        '/test/ids',
        {
          schema: {
            body: Type.Object({ owner: Snowflake(), users: Type.Array(Snowflake()) }),
            response: { 200: Type.Object({ owner: SnowflakeOut(), users: Type.Array(SnowflakeOut()) }) },
          },
        },
        async (request) => {
          seen.push(request.body);
          return request.body;
        },
      );
      app.post(
        '/test/kinds',
        {
          schema: {
            body: Type.Object({
              id: Snowflake(),
              name: Type.Optional(Type.String()),
              count: Type.Optional(Type.Integer()),
            }),
          },
        },
        async () => ({}),
      );
    });

    const post = (payload: string) =>
      app.inject({
        method: 'POST',
        url: '/test/ids',
        headers: { 'content-type': 'application/json' },
        payload,
      });

    it('gives the handler the exact value of a JSON integer near 2^64, and writes it back as the same digits', async () => {
      seen.length = 0;
      const reply = await post(
        '{"owner": 18446744073709551615, "users": [1234567890123456789, 9007199254740993, 7]}',
      );
      assert.equal(reply.statusCode, 200, reply.body);
      assert.deepEqual(seen[0], {
        owner: MAX_SNOWFLAKE,
        users: [1234567890123456789n, 9007199254740993n, 7n],
      });
      assert.equal(
        reply.body,
        '{"owner":18446744073709551615,"users":[1234567890123456789,9007199254740993,7]}',
      );
    });

    it('accepts the same IDs as decimal strings', async () => {
      seen.length = 0;
      const reply = await post('{"owner": "1234567890123456789", "users": ["9007199254740993"]}');
      assert.equal(reply.statusCode, 200, reply.body);
      assert.deepEqual(seen[0], { owner: 1234567890123456789n, users: [9007199254740993n] });
      assert.equal(reply.body, '{"owner":1234567890123456789,"users":[9007199254740993]}');
    });

    it('refuses 0 however it is spelled, and takes an integer-valued number as that integer', async () => {
      for (const zero of ['0', '"0"', '-0', '0.0', '0e5', '"00000000000000000"']) {
        const reply = await post(`{"owner": ${zero}, "users": []}`);
        assert.equal(reply.statusCode, 400, `${zero}: ${reply.body}`);
      }
      seen.length = 0;
      const reply = await post('{"owner": 1e3, "users": [1.0, 12.00]}');
      assert.equal(reply.statusCode, 200, reply.body);
      assert.deepEqual(seen[0], { owner: 1000n, users: [1n, 12n] });
    });

    it('takes an integer beyond 2^53 only where an ID goes: never as text, nor as a plain number', async () => {
      const send = (payload: string) =>
        app.inject({
          method: 'POST',
          url: '/test/kinds',
          headers: { 'content-type': 'application/json' },
          payload,
        });
      assert.equal((await send('{"id":12345678901234567890}')).statusCode, 200);
      const asName = await send('{"id":1,"name":12345678901234567890}');
      assert.equal(asName.statusCode, 400, 'a number is not text, however long');
      assert.match(asName.json().extra[0].developer_reason, /^body\/name /);
      assert.equal((await send('{"id":1,"count":12345678901234567890}')).statusCode, 400);
      assert.equal((await send('{"id":"00012345678901234567"}')).statusCode, 400, 'no leading zeros');
    });

    it('refuses IDs beyond 2^64-1, negative, fractional or not numeric, one problem each', async () => {
      const reply = await post('{"owner": 18446744073709551616, "users": [-1, 1.5, "12a", true]}');
      assert.equal(reply.statusCode, 400);
      const body = JSON.parse(reply.body);
      assert.deepEqual(
        body.extra.map((problem: { developer_reason: string }) => problem.developer_reason.split(' ')[0]),
        ['body/owner', 'body/users/0', 'body/users/1', 'body/users/2', 'body/users/3'],
      );
      assert.match(body.extra[0].reason, /^owner must be an integer from 1 to 18446744073709551615/);
    });
  });
});
