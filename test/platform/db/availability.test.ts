import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createConnection } from 'node:net';
import { describe, it } from 'node:test';
import {
  isDatabaseUnavailable,
  isDatabaseUnreachable,
  isDatabaseUnwritable,
} from '../../../src/platform/db/availability.js';
import { DatabaseSilent } from '../../../src/platform/db/database.js';

/** An error as Node and the drivers make them: a message and the fields they set. */
const errorWith = (message: string, fields: Record<string, unknown>) =>
  Object.assign(new Error(message), fields);

describe('isDatabaseUnavailable', () => {
  it('is true for a server that is not there, shutting down, or refusing connections', async () => {
    // A real refused connection, as the driver sees it.
    const socket = createConnection({ host: '127.0.0.1', port: 1 });
    const [refused] = await once(socket, 'error').catch((error) => [error]);
    assert.equal(isDatabaseUnavailable(refused), true, String(refused));
    assert.equal(isDatabaseUnavailable(errorWith('terminating connection', { code: '57P01' })), true);
    assert.equal(
      isDatabaseUnavailable(errorWith('the database system is starting up', { code: '57P03' })),
      true,
    );
    assert.equal(isDatabaseUnavailable(errorWith('too many clients', { code: '53300' })), true);
    assert.equal(isDatabaseUnavailable(errorWith('conn failure', { code: '08006' })), true);
    assert.equal(isDatabaseUnavailable(new Error('Connection terminated unexpectedly')), true);
    assert.equal(isDatabaseUnavailable(errorWith('database is locked', { code: 'SQLITE_BUSY' })), true);
    assert.equal(isDatabaseUnavailable(new AggregateError([refused], '')), true);
    // A statement PostgreSQL left unanswered past DATABASE_QUERY_TIMEOUT_MS: a server gone silent, as
    // unreachable as one that refuses connections.
    assert.equal(isDatabaseUnavailable(new DatabaseSilent(10)), true);
    assert.equal(isDatabaseUnreachable(new DatabaseSilent(10)), true);
  });

  it('is true for a database that cannot write now: a full disk, an I/O error, a read-only file or standby', () => {
    for (const code of ['53100', '53200', '58030', '25006'])
      assert.equal(isDatabaseUnavailable(errorWith('cannot write', { code })), true, code);
    for (const code of [
      'SQLITE_FULL',
      'SQLITE_IOERR',
      'SQLITE_IOERR_WRITE',
      'SQLITE_READONLY',
      'SQLITE_READONLY_DBMOVED',
    ])
      assert.equal(isDatabaseUnavailable(errorWith('cannot write', { code })), true, code);
    // Reads still work: not unreachable (token records kept are not trusted over it); logged as errors.
    for (const code of ['53100', '25006', 'SQLITE_FULL', 'SQLITE_IOERR_FSYNC']) {
      assert.equal(isDatabaseUnreachable(errorWith('cannot write', { code })), false, code);
      assert.equal(isDatabaseUnwritable(errorWith('cannot write', { code })), true, code);
    }
    for (const code of ['57P01', 'SQLITE_BUSY', '42601'])
      assert.equal(isDatabaseUnwritable(errorWith('other', { code })), false, code);
    // Codes that merely start alike are bugs, not outages.
    for (const code of ['531000', 'SQLITE_FULLER', 'SQLITE_ERROR', 'SQLITE_CONSTRAINT_TRIGGER'])
      assert.equal(isDatabaseUnavailable(errorWith('wrong', { code })), false, code);
  });

  it('is false for a wrong statement, a client that hung up, and anything else', () => {
    assert.equal(isDatabaseUnavailable(errorWith('syntax error', { code: '42601' })), false);
    assert.equal(isDatabaseUnavailable(errorWith('duplicate key', { code: '23505' })), false);
    // Node's error for a request whose client closed the connection mid-body: no outage of the database.
    assert.equal(isDatabaseUnavailable(errorWith('aborted', { code: 'ECONNRESET', statusCode: 400 })), false);
    assert.equal(isDatabaseUnavailable(new Error('boom')), false);
    assert.equal(isDatabaseUnavailable('ECONNREFUSED'), false);
  });
});

describe('isDatabaseUnreachable', () => {
  it('is true for a server that is not there or cut off, false for one that is only busy', async () => {
    const socket = createConnection({ host: '127.0.0.1', port: 1 });
    const [refused] = await once(socket, 'error').catch((error) => [error]);
    assert.equal(isDatabaseUnreachable(refused), true, String(refused));
    assert.equal(isDatabaseUnreachable(new AggregateError([refused], '')), true);
    assert.equal(isDatabaseUnreachable(errorWith('terminating connection', { code: '57P01' })), true);
    assert.equal(isDatabaseUnreachable(new Error('Connection terminated unexpectedly')), true);
    // Busy: the server is there and takes other clients' writes.
    assert.equal(isDatabaseUnreachable(new Error('timeout exceeded when trying to connect')), false);
    assert.equal(isDatabaseUnreachable(errorWith('too many clients', { code: '53300' })), false);
    assert.equal(isDatabaseUnreachable(errorWith('database is locked', { code: 'SQLITE_BUSY' })), false);
    assert.equal(isDatabaseUnreachable(errorWith('syntax error', { code: '42601' })), false);
  });
});
