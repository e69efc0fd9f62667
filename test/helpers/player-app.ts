import type { Grant } from '../../src/platform/auth/grants.js';
import { buildTestApp, type Closer, type TestAppOptions } from './build-test-app.js';
import type { FakeUpstream } from './fake-upstream.js';
import { bearer, issueToken } from './tokens.js';

/**
 * The service against a fake upstream (reset first), with a token (every grant unless told) and `get`,
 * which sends it; `get(url, otherToken)` sends another. Closes itself when `t` ends.
 */
export async function buildPlayerTestApp(
  t: Closer,
  fake: FakeUpstream,
  options: TestAppOptions & { grants?: readonly Grant[] } = {},
) {
  fake.reset();
  const { grants, ...appOptions } = options;
  const test = await buildTestApp(t, { ...appOptions, upstream: fake });
  const token = await issueToken(test.app, test.config, grants ? { grants } : {});
  const get = (url: string, auth = token) => test.app.inject({ method: 'GET', url, headers: bearer(auth) });
  return { ...test, token, get };
}
