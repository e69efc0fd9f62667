import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { sql } from 'kysely';
import { describeEachBackend } from '../../helpers/backends.js';
import { type FakeUpstream, FIXTURE_PLAYERS, startFakeUpstream } from '../../helpers/fake-upstream.js';
import { buildPlayerTestApp } from '../../helpers/player-app.js';
import { problems } from '../../helpers/replies.js';
import { bearer, issueToken } from '../../helpers/tokens.js';

const USER = '18446744073709551615';
const MINIKLOON = FIXTURE_PLAYERS.minikloon.uuid;
const LOCALE_OF_65 = 'en-Latn-US-u-ca-gregory-co-phonebk-fw-mon-hc-h23-kf-upper-nu-latn';
const LOCALE_OF_61 = 'de-DE-u-ca-gregory-co-phonebk-fw-mon-hc-h23-ms-metric-nu-latn';

describeEachBackend('messenger users, hostile input', (backend) => {
  let fake: FakeUpstream;
  before(async () => {
    fake = await startFakeUpstream();
  });
  after(() => fake.close());

  it('refuses oversized, deep, malformed and odd bodies with 4xx ErrorResponses, changing nothing', async (t) => {
    const { app, token } = await buildPlayerTestApp(t, fake, {
      backend,
      grants: ['messenger:read', 'messenger:write'],
    });
    const send = (method: 'PUT' | 'POST', url: string, payload: string, contentType = 'application/json') =>
      app.inject({ method, url, headers: { ...bearer(token), 'content-type': contentType }, payload });
    const profile = `/messenger/user/${USER}/profile`;
    const accounts = `/messenger/user/${USER}/accounts`;
    const cases: [string, 'PUT' | 'POST', string, string, number, string?][] = [
      ['a 70 KB locale', 'PUT', profile, JSON.stringify({ locale: 'x'.repeat(70_000) }), 413],
      [
        'a 70 KB username',
        'POST',
        accounts,
        JSON.stringify({ player: 'Notch', username: 'u'.repeat(70_000) }),
        413,
      ],
      [
        'nesting 100 deep',
        'POST',
        accounts,
        `${'{"a":'.repeat(100)}1${'}'.repeat(100)}`,
        400,
        'BODY_TOO_DEEP',
      ],
      ['malformed JSON', 'PUT', profile, '{"locale": "en-', 400, 'MALFORMED_JSON'],
      ['a duplicate key', 'PUT', profile, '{"locale":"en-US","locale":"fr-FR"}', 400, 'MALFORMED_JSON'],
      ['text, not JSON', 'PUT', profile, 'locale=en-US', 415, 'UNSUPPORTED_MEDIA_TYPE'],
      ['a list body', 'PUT', profile, '["en-US"]', 400],
      // Well-formed tags, canonical as they are: 65 characters is one too many, 61 is fine.
      ['a locale of 65', 'PUT', profile, JSON.stringify({ locale: LOCALE_OF_65 }), 400],
      ['a locale of 61', 'PUT', profile, JSON.stringify({ locale: LOCALE_OF_61 }), 200],
      ['an undetermined language', 'PUT', profile, JSON.stringify({ locale: 'und-x-private' }), 400],
      ['und alone', 'PUT', profile, JSON.stringify({ locale: 'und' }), 400],
      [
        'a username of 65',
        'POST',
        accounts,
        JSON.stringify({ player: 'Notch', verify: true, username: 'u'.repeat(65) }),
        400,
      ],
      [
        'a private-use locale only',
        'PUT',
        profile,
        JSON.stringify({ locale: 'x-private-only-tag-that-is-long' }),
        400,
      ],
      [
        'a blank username',
        'POST',
        accounts,
        JSON.stringify({ player: 'Notch', verify: true, username: '\u3164' }),
        400,
      ],
      ['a player with a path', 'POST', accounts, JSON.stringify({ player: '../../etc/passwd' }), 400],
      ['a player with SQL', 'POST', accounts, JSON.stringify({ player: "x' or 1=1 --" }), 400],
      ['verify as text', 'POST', accounts, JSON.stringify({ player: 'Notch', verify: 'yes' }), 400],
      [
        'an unknown field',
        'POST',
        accounts,
        JSON.stringify({ player: 'Notch', admin: true }),
        400,
        'UNKNOWN_FIELD',
      ],
    ];
    for (const [what, method, url, payload, status, name] of cases) {
      const reply = await send(method, url, payload, what === 'text, not JSON' ? 'text/plain' : undefined);
      assert.equal(reply.statusCode, status, `${what}: ${reply.body}`);
      if (status === 200) assert.equal(reply.json().user_profile.snowflake, USER, what);
      else assert.equal(reply.json().success, false, what);
      if (name) assert.equal(problems(reply)[0]?.name, name, what);
    }
    const longKey = `K${'x'.repeat(5000)}`;
    const unknown = await send('POST', accounts, JSON.stringify({ player: 'Notch', [longKey]: 1 }));
    assert.equal(problems(unknown)[0]?.name, 'UNKNOWN_FIELD');
    assert.ok(unknown.body.length < 1000, 'a made-up name is quoted back in part only');
    const { rows } = await sql<{ count: number }>`select count(*) as count from linked_accounts`.execute(
      app.db,
    );
    assert.equal(Number(rows[0]?.count), 0, 'no account linked by any of them');
  });

  it('refuses snowflakes that are not Discord IDs in the path, whatever their spelling', async (t) => {
    const { get } = await buildPlayerTestApp(t, fake, { backend, grants: ['messenger:read'] });
    for (const snowflake of [
      '00000000000000000',
      '012345678901234567',
      '18446744073709551616',
      '%2E%2E%2Fadmin',
      '1234567890123456789%00',
      '+1234567890123456789',
      ' 1234567890123456789',
      '１２３４５６７８９０１２３４５６７８９',
    ]) {
      const reply = await get(`/messenger/user/${snowflake}/profile`);
      assert.equal(reply.statusCode, 400, `${snowflake}: ${reply.body}`);
    }
    const leadingZeros = await get('/messenger/user/00000000000000001/profile');
    assert.equal(leadingZeros.statusCode, 400, 'leading zeros would spell a shorter ID: refused');
  });

  it('checks the token before the request: 401 for anyone without one, whatever they send', async (t) => {
    const { app, config } = await buildPlayerTestApp(t, fake, { backend });
    const anonymous = await app.inject({
      method: 'POST',
      url: '/messenger/user/not-a-snowflake/accounts',
      headers: { 'content-type': 'application/json' },
      payload: '{"player":',
    });
    assert.equal(anonymous.statusCode, 401, anonymous.body);
    const reader = await issueToken(app, config, { grants: ['messenger:read'] });
    const write = await app.inject({
      method: 'PUT',
      url: `/messenger/user/${USER}/accounts/${MINIKLOON}/primary`,
      headers: bearer(reader),
    });
    assert.equal(write.statusCode, 403, 'reading is not writing');
  });
});
