import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { isInteger, isSafeNumber, parse as parseLossless } from 'lossless-json';
import { Type } from 'typebox';
import { LongInteger, parseJsonBody, parseJsonExact } from '../../src/platform/json.js';
import { MAX_SNOWFLAKE, Snowflake, SnowflakeOut } from '../../src/platform/snowflake.js';
import { buildTestApp, suiteScope } from '../helpers/build-test-app.js';

/** Integers JSON.stringify writes as plain digits that are not safe integers (2^53 and beyond, below 1e21). */
const unsafeDigits = (value: unknown): boolean =>
  typeof value === 'number'
    ? Number.isInteger(value) && !Number.isSafeInteger(value) && Math.abs(value) < 1e21
    : typeof value === 'object' && value !== null && Object.values(value).some(unsafeDigits);

/** JSON values whose integers are all safe, so JSON.parse is a fair oracle. */
const exactJson = fc
  .jsonValue()
  .filter((value) => !JSON.stringify(value).includes('__proto__') && !unsafeDigits(value));

describe('exact JSON (properties)', () => {
  it('parses any JSON text as JSON.parse does, when its integers are safe', () => {
    fc.assert(
      fc.property(exactJson, (value) => {
        const text = JSON.stringify(value);
        assert.deepEqual(parseJsonBody(text, 64), JSON.parse(text));
      }),
    );
  });

  it('keeps the exact digits of every integer beyond the safe range', () => {
    const unsafe = fc.oneof(
      fc.bigInt({ min: 2n ** 53n, max: 2n ** 200n }),
      fc.bigInt({ min: -(2n ** 200n), max: -(2n ** 53n) }),
    );
    fc.assert(
      fc.property(unsafe, (id) => {
        assert.deepEqual(parseJsonBody(`{"n":[${id}]}`, 64), { n: [new LongInteger(id.toString())] });
      }),
    );
  });

  it('parses trusted text exactly as a full exact parser does: long integers anywhere, digits in strings, escapes', () => {
    const oracle = (text: string) =>
      parseLossless(text, null, (digits) =>
        isSafeNumber(digits) ? Number(digits) : isInteger(digits) ? new LongInteger(digits) : Number(digits),
      );
    const longNumber = fc.oneof(
      fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
      fc.constantFrom(
        '9223372036854776000',
        '-9007199254740993',
        '1234567890123456',
        '1.23456789012345678901',
        '12345678901234567e3',
        '1e-12345678901234567',
        '0.5',
      ),
    );
    const piece = fc.oneof(
      longNumber.map((digits) => ({ raw: digits })),
      fc.string().map((text) => ({ raw: JSON.stringify(text) })),
      longNumber.map((digits) => ({ raw: JSON.stringify(`"${digits}\\ ${digits}`) })),
      fc.constantFrom({ raw: '"\\u0000x"' }, { raw: '"\\\\"' }, { raw: 'null' }, { raw: 'true' }),
    );
    const keys = fc.constantFrom('a', '__proto__', '12345678901234567890', 'k"q');
    const documents = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        piece.map((p) => p.raw),
        fc.array(tie('value'), { maxLength: 4 }).map((items) => `[${items.join(',')}]`),
        fc
          .uniqueArray(fc.tuple(keys, tie('value')), { maxLength: 4, selector: ([key]) => key })
          .map(
            (members) => `{${members.map(([key, value]) => `${JSON.stringify(key)}:${value}`).join(',')}}`,
          ),
      ),
    })).value;
    fc.assert(
      fc.property(documents, (text) => {
        assert.deepEqual(parseJsonExact(text), oracle(text), text);
      }),
      { numRuns: 2000 },
    );
  });

  describe('through a route', () => {
    let app: FastifyInstance;
    const scope = suiteScope();
    before(async () => {
      ({ app } = await buildTestApp(scope, { env: { LOG_LEVEL: 'silent' } }));
      app.post(
        '/test/id',
        {
          schema: {
            body: Type.Object({ id: Snowflake() }),
            response: { 200: Type.Object({ id: SnowflakeOut() }) },
          },
        },
        async (request) => request.body,
      );
    });

    it('hands back every ID from 1 to 2^64-1 as the same digits, given as a number or a string', async () => {
      await fc.assert(
        fc.asyncProperty(fc.bigInt({ min: 1n, max: MAX_SNOWFLAKE }), fc.boolean(), async (id, asString) => {
          const payload = asString ? `{"id":"${id}"}` : `{"id":${id}}`;
          const reply = await app.inject({
            method: 'POST',
            url: '/test/id',
            headers: { 'content-type': 'application/json' },
            payload,
          });
          assert.equal(reply.statusCode, 200, reply.body);
          assert.equal(reply.body, `{"id":${id}}`);
        }),
        { numRuns: 300 },
      );
    });

    it('refuses every ID beyond 2^64-1 or below 1 with a 400', async () => {
      const outside = fc.oneof(
        fc.bigInt({ min: MAX_SNOWFLAKE + 1n, max: 2n ** 80n }),
        fc.bigInt({ min: -(2n ** 70n), max: 0n }),
      );
      await fc.assert(
        fc.asyncProperty(outside, async (id) => {
          const reply = await app.inject({
            method: 'POST',
            url: '/test/id',
            headers: { 'content-type': 'application/json' },
            payload: `{"id":${id}}`,
          });
          assert.equal(reply.statusCode, 400, `${id}: ${reply.body}`);
        }),
        { numRuns: 200 },
      );
    });
  });
});
