import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { nodeArgs } from './node-process.js';

describe('describeEachBackend without the servers configured', () => {
  it('reports each left-out backend as a skipped test naming the variable to set', async () => {
    const env = { ...process.env };
    // Inherited, NODE_TEST_CONTEXT (set by this runner) makes the child print nothing to stdout: it reports
    // in the runner's own protocol instead of TAP.
    for (const name of ['TEST_DATABASE_URL', 'TEST_REDIS_URL', 'CI', 'NODE_TEST_CONTEXT']) delete env[name];
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--test', '--test-reporter=tap', ...nodeArgs('test/helpers/each-backend-sample.ts')],
      { env },
    );
    // SQLite with the memory cache runs; PostgreSQL, and PostgreSQL with Redis, do not.
    assert.match(stdout, /^# pass 1$/m, stdout);
    assert.match(stdout, /^# skipped 2$/m, stdout);
    const reasons = stdout.split('\n').filter((line) => line.includes('# SKIP'));
    assert.equal(reasons.length, 2, stdout);
    const example = {
      database: 'TEST_DATABASE_URL is not set (e.g. TEST_DATABASE_URL=postgres://',
      redis: 'TEST_REDIS_URL is not set (e.g. TEST_REDIS_URL=redis://',
    };
    assert.equal(reasons.filter((line) => line.includes(example.database)).length, 2, stdout);
    assert.equal(reasons.filter((line) => line.includes(example.redis)).length, 1, stdout);
  });
});
