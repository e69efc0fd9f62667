// A write by another process is noticed when trust is asked: a load that may predate it is not kept.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLocalInvalidationFeed } from '../../../src/platform/cache/invalidation.js';
import { createKeptRecords } from '../../../src/platform/cache/kept-records.js';

interface Rec {
  readonly jti: string;
  readonly chain: string;
  readonly revoked: boolean;
}

describe('kept records on the local feed (SQLite)', () => {
  it('does not keep a record read before an external write that the post-load check detects', async () => {
    let clock = 1_000;
    let externalWrite = false;
    // PRAGMA data_version as the probe reports it: true once per write by another process.
    const feed = createLocalInvalidationFeed(
      () => {
        const changed = externalWrite;
        externalWrite = false;
        return changed;
      },
      () => clock,
    );
    const table = new Map<string, Rec>([['t1', { jti: 't1', chain: 'c1', revoked: false }]]);
    let interleave = true;
    const records = createKeptRecords<Rec>({
      feed,
      max: 100,
      forMs: 300_000,
      groupOf: (record) => record.chain,
      async load(jti) {
        const row = table.get(jti); // the SELECT
        if (interleave) {
          interleave = false;
          // The command line commits `token revoke` right after our SELECT returned (another process:
          // nothing in this process is told), and the 10 ms throttle has run out by the time we check.
          table.set(jti, { jti, chain: 'c1', revoked: true });
          externalWrite = true;
          clock += 11;
        }
        return row;
      },
    });
    assert.equal((await records.find('t1'))?.revoked, false, 'the read predates the revocation: fine');
    for (const later of [1, 50, 5_000, 60_000]) {
      clock += later;
      assert.equal(
        (await records.find('t1'))?.revoked,
        true,
        `revoked token's stale record still served ${later} ms later`,
      );
    }
  });
});
