import assert from 'node:assert/strict';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../../src/config.js';
import { resolveJwtSecret } from '../../../src/platform/auth/jwt-secret.js';

describe('JWT secret', () => {
  it('refuses a secret shorter than 32 bytes, without echoing it', () => {
    assert.throws(
      () => loadConfig({ JWT_SECRET: 'short-secret-value' }),
      (error: unknown) =>
        error instanceof ConfigError &&
        /JWT_SECRET must be at least 32 bytes/.test(error.message) &&
        !error.message.includes('short-secret-value'),
    );
  });

  it('is required in production', () => {
    assert.throws(
      () => loadConfig({ NODE_ENV: 'production' }),
      /JWT_SECRET is required when NODE_ENV=production/,
    );
    assert.equal(
      loadConfig({ NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32) }).auth.jwtSecret,
      'x'.repeat(32),
    );
  });

  it('outside production without JWT_SECRET, is generated once into the data dir with mode 0600 and kept', async (t) => {
    const dataDir = await mkdtemp(join(tmpdir(), 'pds-secret-'));
    t.after(() => rm(dataDir, { recursive: true, force: true }));
    const first = await resolveJwtSecret(undefined, dataDir);
    assert.ok(Buffer.byteLength(first) >= 32);
    assert.equal((await stat(join(dataDir, 'jwt-secret'))).mode & 0o777, 0o600);
    assert.equal(await resolveJwtSecret(undefined, dataDir), first, 'a restart reads the same secret');
  });

  it('is the configured one when JWT_SECRET is set, and then writes nothing', async (t) => {
    const dataDir = await mkdtemp(join(tmpdir(), 'pds-secret-'));
    t.after(() => rm(dataDir, { recursive: true, force: true }));
    assert.equal(await resolveJwtSecret('y'.repeat(40), dataDir), 'y'.repeat(40));
    await assert.rejects(stat(join(dataDir, 'jwt-secret')), { code: 'ENOENT' });
  });
});
