import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ValidateFunction } from 'ajv';
import { ApplicationRequestSchema } from '../../src/modules/applications/applications.schemas.js';
import { InteractionLogRequestSchema } from '../../src/modules/interactions/interactions.schemas.js';
import { PingIngestRequestSchema } from '../../src/modules/ping/ping.schemas.js';
import { MAX_PROBLEMS } from '../../src/platform/errors.js';
import { createValidatorCompiler } from '../../src/platform/validation.js';
import { buildTestApp } from '../helpers/build-test-app.js';
import { problems } from '../helpers/replies.js';
import { bearer, issueToken } from '../helpers/tokens.js';

const compile = createValidatorCompiler();
const bodyValidator = (schema: object) =>
  compile({ schema, httpPart: 'body', method: 'POST', url: '/test' }) as ValidateFunction;

/** An object of `count` keys no schema of the service takes. */
const unknownKeys = (count: number, into: Record<string, unknown> = {}) => {
  for (let index = 0; index < count; index++) into[`unknown${index}`] = index;
  return into;
};

// These fail when Ajv's generated code no longer reads as validation.ts expects (its cap then finds
// nothing to edit, and every error is collected again).
describe('validation stops at the cap', () => {
  it('stops at MAX_PROBLEMS errors on bodies with thousands of problems, for every kind of request body', () => {
    const cases: [string, object, unknown][] = [
      ['unknown keys of an application', ApplicationRequestSchema, unknownKeys(8300, { name: 'x' })],
      ['unknown keys of a log', InteractionLogRequestSchema, unknownKeys(90_000)],
      [
        'a thousand bad samples',
        PingIngestRequestSchema,
        {
          samples: Array.from({ length: 1000 }, () => unknownKeys(60, { ping: 'fast', lobby: 7 })),
        },
      ],
    ];
    for (const [what, schema, body] of cases) {
      const validate = bodyValidator(schema);
      assert.equal(validate(body), false, what);
      assert.equal(validate.errors?.length, MAX_PROBLEMS, what);
    }
  });

  it('finds every problem under the cap, and passes valid bodies', () => {
    const validate = bodyValidator(PingIngestRequestSchema);
    assert.equal(validate({ samples: [{ ping: 40, lobby: 'lobby' }] }), true);
    assert.equal(validate({ samples: [{ ping: 'x', lobby: 1 }], extra: true }), false);
    assert.equal(validate.errors?.length, 3);
  });

  it('leaves a union whole: errors of a failing branch never refuse a value another branch takes', () => {
    const validate = bodyValidator({
      type: 'object',
      properties: {
        values: {
          anyOf: [
            { type: 'array', items: { type: 'integer' } },
            { type: 'array', items: { type: 'string' } },
          ],
        },
      },
    });
    const strings = Array.from({ length: 5 * MAX_PROBLEMS }, (_, index) => `value ${index}`);
    assert.equal(validate({ values: strings }), true);
  });

  it('answers at most MAX_PROBLEMS problems, small, for a body of thousands of unknown keys', async (t) => {
    const { app, config } = await buildTestApp(t);
    // Thousands of unknown keys within the 64 KiB body limit, as a client found costing 80-130 ms and an
    // answer of 1.2 MB.
    const body: Record<string, unknown> = { name: 'x', grants: ['player:read'] };
    for (let index = 0; JSON.stringify(body).length < 60_000; index++) body[`k${index}`] = 0;
    const reply = await app.inject({
      method: 'POST',
      url: '/admin/developer/applications',
      headers: { ...bearer(await issueToken(app, config)), 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
    assert.equal(reply.statusCode, 400, reply.body.slice(0, 500));
    assert.equal(problems(reply).length, MAX_PROBLEMS);
    assert.ok(problems(reply).every((problem) => problem.name === 'UNKNOWN_FIELD'));
    assert.match(problems(reply)[0]?.developer_reason ?? '', /^body\/k0 is not allowed here/);
    assert.ok(reply.body.length < 8192, `an answer of ${reply.body.length} bytes`);
  });
});
