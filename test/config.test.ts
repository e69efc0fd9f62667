import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.js';

describe('configuration', () => {
  it('starts with nothing set, on SQLite under ./data', () => {
    const config = loadConfig({});
    assert.deepEqual(config.database, { dialect: 'sqlite', path: './data/service.sqlite' });
    assert.equal(config.server.port, 3000);
    assert.equal(config.server.bodyLimitBytes, 65536);
    assert.equal(config.redisUrl, undefined);
    assert.ok(Object.isFrozen(config) && Object.isFrozen(config.server));
  });

  it('reads PostgreSQL, Redis and numbers from text', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://u@h/db',
      REDIS_URL: 'redis://h:6379',
      PORT: '8080',
      TRUST_PROXY: 'true',
    });
    assert.deepEqual(config.database, {
      dialect: 'postgres',
      url: 'postgres://u@h/db',
      poolSize: 10,
      connectionTimeoutMs: 5000,
      queryTimeoutMs: 10_000,
    });
    assert.equal(config.redisUrl, 'redis://h:6379');
    assert.equal(config.server.port, 8080);
    assert.equal(config.server.trustProxy, true);
  });

  it('treats an empty variable as unset', () => {
    assert.equal(loadConfig({ REDIS_URL: '' }).redisUrl, undefined);
  });

  it('names every wrong variable and what it expects', () => {
    assert.throws(
      () => loadConfig({ PORT: '70000', DATABASE_URL: 'mysql://x', LOG_LEVEL: 'loud' }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.equal(error.problems.length, 3);
        assert.match(error.message, /PORT must be <= 65535 \(got "70000"\)/);
        assert.match(error.message, /DATABASE_URL must be sqlite:<path> or postgres:\/\/\.\.\./);
        assert.match(
          error.message,
          /LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent/,
        );
        return true;
      },
    );
  });
});
