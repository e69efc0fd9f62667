import { loadConfig } from '../../src/config.js';
import { createTokensService } from '../../src/modules/tokens/tokens.service.js';
import type { Grant } from '../../src/platform/auth/grants.js';
import { createTokenCodec } from '../../src/platform/auth/token-codec.js';
import type { Database } from '../../src/platform/db/database.js';
import { executorOf } from '../../src/platform/db/transactions.js';
import { TEST_JWT_SECRET } from './build-test-app.js';

/**
 * A token for a service running as a child process (startServiceProcess, which signs with
 * TEST_JWT_SECRET): recorded straight into the database it runs on, as the command line would.
 */
export async function issueProcessToken(
  db: Database,
  grants: readonly Grant[],
  owner = 42n,
): Promise<string> {
  const { auth } = loadConfig({ JWT_SECRET: TEST_JWT_SECRET, DATA_DIR: '/nonexistent-unused' });
  const tokens = createTokensService({
    db: executorOf(db),
    codec: createTokenCodec(TEST_JWT_SECRET, auth),
    settings: auth,
  });
  return (await tokens.issue(owner, grants)).token;
}
