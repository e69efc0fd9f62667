// The service under load: the real app (SQLite in a temp dir, logging at info to /dev/null as a
// production instance would log to a collector), on a random port it prints on stdout with a token
// carrying every grant.
import { createWriteStream, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { migrations } from '../../src/migrations.js';
import { createTokensModule } from '../../src/modules/tokens/tokens.module.js';
import { GRANTS } from '../../src/platform/auth/grants.js';
import { resolveJwtSecret } from '../../src/platform/auth/jwt-secret.js';
import { migrateToLatest } from '../../src/platform/db/migrator.js';
import { executorOf } from '../../src/platform/db/transactions.js';

const dir = mkdtempSync(join(tmpdir(), 'pds-bench-'));
const config = loadConfig({
  ...process.env,
  DATABASE_URL: `sqlite:${join(dir, 'bench.sqlite')}`,
  DATA_DIR: dir,
  PORT: '0',
  LOG_LEVEL: 'info',
});
const app = await buildApp({ config, logStream: createWriteStream('/dev/null') });
await migrateToLatest(app.db, migrations);
const tokens = createTokensModule({
  db: executorOf(app.db),
  settings: config.auth,
  secret: await resolveJwtSecret(config.auth.jwtSecret, config.dataDir),
});
const { token } = await tokens.service.issue(1n, [...GRANTS], { ttlSeconds: 86_400 });
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
process.stdout.write(
  `${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0, token })}\n`,
);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
