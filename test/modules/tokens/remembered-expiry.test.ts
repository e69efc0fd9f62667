import assert from 'node:assert/strict';
import { it } from 'node:test';
import { createTokensService } from '../../../src/modules/tokens/tokens.service.js';
import { createTokenCodec } from '../../../src/platform/auth/token-codec.js';
import { createLocalInvalidationFeed } from '../../../src/platform/cache/invalidation.js';
import { createDatabase } from '../../../src/platform/db/database.js';
import { executorOf } from '../../../src/platform/db/transactions.js';
import { AppError, ErrorKinds } from '../../../src/platform/errors.js';
import { describeEachBackend } from '../../helpers/backends.js';
import { deferClose, TEST_JWT_SECRET, testConfig } from '../../helpers/build-test-app.js';
import { createFakeClock } from '../../helpers/fake-clock.js';

/** A leeway other than the default (30 s), so that one written into the code instead of read shows. */
const LEEWAY_SECONDS = 17;
const TTL_SECONDS = 600;
/** A whole second: the token's `exp` is then exactly TTL_SECONDS after it. */
const ISSUED_AT = Date.UTC(2026, 10, 22, 12);

describeEachBackend('a token the service remembers', (backend) => {
  it('is refused once its exp plus the configured clock leeway has passed', async (t) => {
    const config = await testConfig(t, {
      backend,
      env: { JWT_CLOCK_LEEWAY_SECONDS: String(LEEWAY_SECONDS), TOKEN_TTL_SECONDS: String(TTL_SECONDS) },
    });
    assert.equal(config.auth.clockLeewaySeconds, LEEWAY_SECONDS, 'JWT_CLOCK_LEEWAY_SECONDS is the leeway');
    const db = createDatabase(config.database);
    deferClose(t, () => db.destroy());
    const clock = createFakeClock(ISSUED_AT);
    // As the app builds it, with a feed of revocations so that token records are kept in process.
    const tokens = createTokensService({
      db: executorOf(db),
      codec: createTokenCodec(TEST_JWT_SECRET, config.auth),
      settings: config.auth,
      revocations: createLocalInvalidationFeed(),
      now: clock.now,
    });
    await tokens.checkForChanges();
    const { token, expiresAt } = await tokens.issue(42n, ['player:read']);
    assert.equal(expiresAt.getTime(), ISSUED_AT + TTL_SECONDS * 1000);

    // Used: the codec remembers it verified, and its record is kept. The second use is answered from both
    // (the same principal, nothing verified or compared again).
    const first = await tokens.authenticate(token);
    assert.equal(first.owner, 42n);
    assert.equal(await tokens.authenticate(token), first, 'the token and its record are remembered');

    // Up to its expiry plus the leeway, it still opens.
    await clock.advance(TTL_SECONDS * 1000 + LEEWAY_SECONDS * 1000);
    assert.equal((await tokens.authenticate(token)).owner, 42n, 'within the leeway');

    // A millisecond later, it does not, though it is remembered, and then again.
    await clock.advance(1);
    for (const attempt of ['first', 'again']) {
      await assert.rejects(
        tokens.authenticate(token),
        (error: unknown) =>
          error instanceof AppError &&
          error.status === 401 &&
          error.problems[0]?.kind === ErrorKinds.TOKEN_EXPIRED,
        `refused past the leeway (${attempt})`,
      );
    }
  });
});
