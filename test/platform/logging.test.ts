import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { REDACTED, redactSecrets, redactUrl } from '../../src/platform/logger.js';
import { buildTestApp } from '../helpers/build-test-app.js';

const SECRETS = [
  'eyJhbGciOiJIUzI1NiJ9.secret-jwt',
  'interaction-secret-xyz',
  'body-token-abc',
  'query-token-def',
];

describe('logging', () => {
  it('redacts secret-named keys at any depth and leaves other objects untouched', () => {
    const clean = { a: 1, b: [{ c: 'd' }] };
    assert.equal(redactSecrets(clean), clean);
    assert.deepEqual(
      redactSecrets({
        headers: { Authorization: 'Bearer x' },
        deep: [{ interaction: { interaction_token: 'y' } }],
        token: 'z',
      }),
      {
        headers: { Authorization: REDACTED },
        deep: [{ interaction: { interaction_token: REDACTED } }],
        token: REDACTED,
      },
    );
    assert.equal(redactUrl('/a?x=1&token=abc&Token=d'), `/a?x=1&token=${REDACTED}&Token=${REDACTED}`);
  });

  it('writes one JSON line per request with route, status and duration, and never a secret', async (t) => {
    const { app, logs } = await buildTestApp(t);
    // What a careless handler might log: the headers and the whole body.
    app.post('/test/careless', async (request) => {
      request.log.info({ headers: request.headers, body: request.body }, 'received');
      throw Object.assign(new Error('failed'), { details: request.body });
    });
    const reply = await app.inject({
      method: 'POST',
      url: `/test/careless?token=${SECRETS[3]}`,
      headers: { authorization: `Bearer ${SECRETS[0]}`, 'x-request-id': 'log-test-1' },
      payload: { interaction: { interaction_token: SECRETS[1], name: 'ping' }, token: SECRETS[2] },
    });
    assert.equal(reply.statusCode, 500);
    await app.close();

    const text = logs.raw.join('\n');
    for (const secret of SECRETS) assert.ok(!text.includes(secret), `log output contains ${secret}`);
    assert.ok(text.includes(REDACTED));

    const requestLines = logs.lines.filter(
      (line) => line.reqId === 'log-test-1' && line.msg === 'request completed',
    );
    assert.equal(requestLines.length, 1);
    assert.equal(requestLines[0]?.route, '/test/careless');
    assert.equal(requestLines[0]?.status, 500);
    assert.equal(typeof requestLines[0]?.durationMs, 'number');
    const failure = logs.lines.find((line) => line.msg === 'request failed');
    assert.ok(failure, 'a 5xx is logged with its error');
    assert.match(JSON.stringify(failure), /failed/);
  });
});
