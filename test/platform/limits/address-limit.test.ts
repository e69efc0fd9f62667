import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { buildTestApp } from '../../helpers/build-test-app.js';

/*
 * The per-address limits of the routes that hand out tokens count per client address as Fastify's
 * `request.ip` gives it: behind a trusted proxy (TRUST_PROXY) the address the proxy forwarded, otherwise the
 * connection's, whatever X-Forwarded-For a client writes.
 */

const LIMIT = 2;
const PROXY = '10.0.0.1';
const CLIENT = '203.0.113.7';
const OTHER_CLIENT = '198.51.100.23';

/** An app whose token routes allow LIMIT requests a minute per address, with TRUST_PROXY as given. */
async function limited(t: TestContext, trustProxy: boolean) {
  const { app } = await buildTestApp(t, {
    env: { RATE_LIMIT_AUTH_PER_MINUTE: String(LIMIT), TRUST_PROXY: String(trustProxy) },
  });
  /** A refresh (of a token that is not one: 401 unless limited) from `from`, saying it forwards `forwarded`. */
  const refresh = async (from: string, forwarded?: string) => {
    const reply = await app.inject({
      method: 'POST',
      url: '/auth/refresh',
      payload: { token: 'x.y.z' },
      remoteAddress: from,
      headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded },
    });
    const remaining = /"address";r=(\d+)/.exec(String(reply.headers.ratelimit))?.[1];
    return { status: reply.statusCode, remaining: Number(remaining) };
  };
  return { refresh };
}

/** Uses up the bucket `refresh(...)` counts in: LIMIT answers, then a 429. */
async function useUp(refresh: () => Promise<{ status: number; remaining: number }>) {
  for (let sent = 1; sent <= LIMIT; sent++)
    assert.deepEqual(await refresh(), { status: 401, remaining: LIMIT - sent });
  assert.equal((await refresh()).status, 429, 'the limit is reached');
}

describe('per-address limits and X-Forwarded-For', () => {
  it('with TRUST_PROXY, gives each forwarded client address its own bucket', async (t) => {
    const { refresh } = await limited(t, true);
    await useUp(() => refresh(PROXY, CLIENT));
    // Another client behind the same proxy: a bucket of its own, full.
    assert.deepEqual(await refresh(PROXY, OTHER_CLIENT), { status: 401, remaining: LIMIT - 1 });
    // The first client, through another of the proxy's addresses: still its bucket, still used up.
    assert.equal((await refresh('10.0.0.2', CLIENT)).status, 429);
  });

  it('without TRUST_PROXY, counts the connection’s address: a forged X-Forwarded-For escapes nothing', async (t) => {
    const { refresh } = await limited(t, false);
    await useUp(() => refresh(PROXY, CLIENT));
    for (const forged of [OTHER_CLIENT, `${OTHER_CLIENT}, ${CLIENT}`, '127.0.0.1', 'nonsense'])
      assert.equal((await refresh(PROXY, forged)).status, 429, `X-Forwarded-For: ${forged}`);
    assert.equal((await refresh(PROXY)).status, 429, 'without the header either');
    // Another connection's address has its own bucket.
    assert.deepEqual(await refresh('10.0.0.2', CLIENT), { status: 401, remaining: LIMIT - 1 });
  });
});
