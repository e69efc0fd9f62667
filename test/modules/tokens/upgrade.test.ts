import assert from 'node:assert/strict';
import { it } from 'node:test';
import { sql } from 'kysely';
import { migrations } from '../../../src/migrations.js';
import { migrateToLatest } from '../../../src/platform/db/migrator.js';
import { describeEachBackend } from '../../helpers/backends.js';
import { buildTestApp } from '../../helpers/build-test-app.js';

/** The schema a deployment had before a chain could end (identity tokens outlived their session). */
const BEFORE_CHAIN_ENDS = Object.fromEntries(
  Object.entries(migrations).filter(([name]) => name < '0020-token-chain-ends'),
);

describeEachBackend('identity tokens issued before chains could end, upgraded in place', (backend) => {
  it('end with their session as it stands: when it ended, when it expires, or at once when it is gone', async (t) => {
    const test = await buildTestApp(t, { backend, migrate: false });
    const db = test.app.db;
    await migrateToLatest(db, BEFORE_CHAIN_ENDS);
    const sessions = [
      ['live', null, 9_000_000],
      ['ended', 5_000_000, 9_000_000],
    ] as const;
    for (const [hash, endedAt, expiresAt] of sessions) {
      await sql`insert into portal_sessions (id_hash, owner, username, global_name, created_at, expires_at, ended_at)
        values (${hash}, '222222222222222222', 'alice', null, 1, ${expiresAt}, ${endedAt})`.execute(db);
    }
    const tokens = [
      ['of-live', 'session:live'],
      ['of-ended', 'session:ended'],
      ['of-purged', 'session:purged'],
      ['of-key', '7d0c5b0e-0000-4000-8000-000000000001'],
      ['of-operator', null],
    ] as const;
    for (const [jti, keyId] of tokens) {
      await sql`insert into tokens (jti, owner, grants, chain_id, key_id, issued_at, expires_at)
        values (${jti}, '222222222222222222', '', ${jti}, ${keyId}, 1, 2)`.execute(db);
    }
    await migrateToLatest(db, migrations);
    const { rows } = await sql<{ jti: string; chain_ends_at: number | string | null }>`
      select jti, chain_ends_at from tokens order by jti`.execute(db);
    assert.deepEqual(
      Object.fromEntries(
        rows.map((row) => [row.jti, row.chain_ends_at === null ? null : Number(row.chain_ends_at)]),
      ),
      {
        'of-ended': 5_000_000,
        'of-key': null,
        'of-live': 9_000_000,
        'of-operator': null,
        'of-purged': 0,
      },
    );
  });
});
