import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../../src/config.js';
import { resolveJwtSecret } from '../../../src/platform/auth/jwt-secret.js';
import { StartupError } from '../../../src/platform/startup-error.js';

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
    const parent = await mkdtemp(join(tmpdir(), 'pds-secret-'));
    t.after(() => rm(parent, { recursive: true, force: true }));
    const dataDir = join(parent, 'data');
    const first = await resolveJwtSecret(undefined, dataDir);
    assert.ok(Buffer.byteLength(first) >= 32);
    assert.equal((await stat(dataDir)).mode & 0o777, 0o700, 'the data dir it creates is private');
    assert.equal((await stat(join(dataDir, 'jwt-secret'))).mode & 0o777, 0o600);
    assert.equal(await resolveJwtSecret(undefined, dataDir), first, 'a restart reads the same secret');
  });

  it('is the configured one when JWT_SECRET is set, and then writes nothing', async (t) => {
    const dataDir = await mkdtemp(join(tmpdir(), 'pds-secret-'));
    t.after(() => rm(dataDir, { recursive: true, force: true }));
    assert.equal(await resolveJwtSecret('y'.repeat(40), dataDir), 'y'.repeat(40));
    await assert.rejects(stat(join(dataDir, 'jwt-secret')), { code: 'ENOENT' });
  });

  it('refuses a kept secret that is too short, or readable by group or others, naming the file', async (t) => {
    const dataDir = await mkdtemp(join(tmpdir(), 'pds-secret-'));
    t.after(() => rm(dataDir, { recursive: true, force: true }));
    const file = join(dataDir, 'jwt-secret');
    await writeFile(file, 'abc\n', { mode: 0o600 });
    await assert.rejects(resolveJwtSecret(undefined, dataDir), (error: Error) => {
      assert.ok(error instanceof StartupError);
      assert.match(error.message, /jwt-secret/);
      assert.ok(error.message.includes(file), error.message);
      assert.match(error.message, /3 bytes.*at least 32/);
      assert.ok(!error.message.includes('abc'), 'the secret is not echoed');
      return true;
    });
    await writeFile(file, `${'k'.repeat(48)}\n`);
    for (const mode of [0o644, 0o640, 0o604, 0o660]) {
      await chmod(file, mode);
      await assert.rejects(resolveJwtSecret(undefined, dataDir), (error: Error) => {
        assert.ok(error instanceof StartupError);
        assert.ok(error.message.includes(file), error.message);
        assert.match(error.message, /group or others.*chmod 600/);
        return true;
      });
    }
    await chmod(file, 0o600);
    assert.equal(await resolveJwtSecret(undefined, dataDir), 'k'.repeat(48));
  });
});
