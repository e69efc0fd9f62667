import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { it, type TestContext } from 'node:test';
import { SignJWT } from 'jose';
import { type Kysely, sql } from 'kysely';
import type { Grant } from '../../../src/platform/auth/grants.js';
import { type Backend, describeEachBackend } from '../../helpers/backends.js';
import { buildTestApp, TEST_JWT_SECRET } from '../../helpers/build-test-app.js';
import { json, problemName, problems, type Reply } from '../../helpers/replies.js';
import { addWhoamiRoute, bearer, issueToken } from '../../helpers/tokens.js';

const BASE = '/admin/developer/applications';
const DEVELOPER = 18446744073709551615n;
const REVIEWER = 123456789012345678n;
const STATES = ['pending', 'approved', 'rejected', 'withdrawn', 'revoked'] as const;
const ACTIONS = ['approve', 'reject', 'revoke', 'withdraw'] as const;
type State = (typeof STATES)[number];
type Action = (typeof ACTIONS)[number];

/** The allowed changes, written out independently of the service's table. */
const ALLOWED: Record<State, Partial<Record<Action, State>>> = {
  pending: { approve: 'approved', reject: 'rejected', withdraw: 'withdrawn' },
  approved: { revoke: 'revoked' },
  rejected: {},
  withdrawn: {},
  revoked: {},
};
/** How to bring a new application to each state. */
const PATH_TO: Record<State, Action[]> = {
  pending: [],
  approved: ['approve'],
  rejected: ['reject'],
  withdrawn: ['withdraw'],
  revoked: ['approve', 'revoke'],
};

async function setup(t: TestContext, backend: Backend, env: Record<string, string> = {}) {
  const test = await buildTestApp(t, { backend, env });
  addWhoamiRoute(test.app, 'player:read');
  const token = (owner: bigint, grants: readonly Grant[] = ['player:read']) =>
    issueToken(test.app, test.config, { owner, grants });
  const call = (method: 'GET' | 'POST', url: string, auth?: string, payload?: unknown) =>
    test.app.inject({
      method,
      url,
      headers: auth ? bearer(auth) : {},
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  const developer = await token(DEVELOPER);
  // The developer's identity token (no grants): what manages their keys outside the portal.
  const identity = await token(DEVELOPER, []);
  const reviewer = await token(REVIEWER, ['applications:review']);
  const apply = (auth: string, body: unknown) => call('POST', BASE, auth, body);
  const act = (auth: string, id: string, action: Action, body?: unknown) =>
    call('POST', `${BASE}/${id}/${action}`, auth, body);
  /** A new application of the developer's, brought to `state`; its id. */
  const inState = async (state: State, owner = developer): Promise<string> => {
    const created = await apply(owner, { name: 'Stats bot', grants: ['player:read'] });
    assert.equal(created.statusCode, 200, created.body);
    const { id } = json(created);
    for (const action of PATH_TO[state]) {
      const moved = await act(action === 'withdraw' ? owner : reviewer, id, action);
      assert.equal(moved.statusCode, 200, moved.body);
    }
    return id;
  };
  const tokensOf = async (owner: bigint) => {
    const { rows } = await sql<{
      jti: string;
      revoked_at: number | null;
    }>`select jti, revoked_at from tokens where owner = ${owner.toString()}`.execute(test.app.db);
    return rows;
  };
  return { ...test, token, call, developer, identity, reviewer, apply, act, inState, tokensOf };
}

/** A token signed with the service's key, with these claims (no `sub` unless given). */
function signed(claims: Record<string, unknown>, secret = TEST_JWT_SECRET) {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ scope: 'player:read', jti: randomUUID(), iat: now, exp: now + 600, ...claims })
    .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
    .setIssuer('player-data-service')
    .setAudience('player-data-api')
    .sign(new TextEncoder().encode(secret));
}

describeEachBackend('developer applications', (backend) => {
  it('creates a pending application: owner from the token, exact; server-assigned fields ignored', async (t) => {
    const { apply, developer } = await setup(t, backend);
    const before = Date.now();
    const reply = await apply(developer, {
      name: 'Guild stats 🎮',
      description: 'Shows guild members their stats.\nTwice a day.',
      grants: ['player:read', 'ping:read'],
      id: 'mine',
      applied_at: '2001-01-01T00:00:00.000Z',
      currentState: 'approved',
    });
    assert.equal(reply.statusCode, 200, reply.body);
    const application = json(reply);
    assert.match(application.id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.equal(application.currentState, 'pending');
    assert.equal(application.name, 'Guild stats 🎮');
    assert.equal(application.description, 'Shows guild members their stats.\nTwice a day.');
    assert.deepEqual(application.grants, ['player:read', 'ping:read']);
    assert.match(reply.body, /"owner":18446744073709551615,/, 'the owner as exact integer digits');
    assert.match(application.applied_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const appliedAt = Date.parse(application.applied_at);
    assert.ok(appliedAt >= before && appliedAt <= Date.now(), 'applied_at is now');
    assert.deepEqual(Object.keys(application).sort(), [
      'applied_at',
      'currentState',
      'description',
      'grants',
      'id',
      'name',
      'owner',
    ]);
    const second = json(await apply(developer, { name: 'x', grants: ['player:read'] }));
    assert.notEqual(second.id, application.id, 'each application has a new id');
    assert.equal(second.description, '', 'a left-out description is empty');
  });

  it('takes a body owner that is the token owner (integer or string), and refuses another with 400', async (t) => {
    const { app, apply, developer } = await setup(t, backend);
    const asInteger = await app.inject({
      method: 'POST',
      url: BASE,
      headers: { ...bearer(developer), 'content-type': 'application/json' },
      payload: '{"name":"x","grants":["player:read"],"owner":18446744073709551615}',
    });
    assert.equal(asInteger.statusCode, 200, asInteger.body);
    const asString = await apply(developer, {
      name: 'x',
      grants: ['player:read'],
      owner: '18446744073709551615',
    });
    assert.equal(asString.statusCode, 200, asString.body);
    for (const owner of ['18446744073709551614', 1, '123456789012345678']) {
      const other = await apply(developer, { name: 'x', grants: ['player:read'], owner });
      assert.equal(other.statusCode, 400, other.body);
      assert.equal(problemName(other), 'OWNER_MISMATCH');
      assert.match(problems(other)[0]?.developer_reason ?? '', /body\/owner must be the token's owner/);
    }
  });

  it('answers 400 TOKEN_NO_OWNER when the token names no usable owner; 401 on other routes', async (t) => {
    const { apply, call } = await setup(t, backend);
    const body = { name: 'x', grants: ['player:read'] };
    for (const [what, claims] of Object.entries({
      'no sub': {},
      'an empty sub': { sub: '' },
      'a sub that is not a number': { sub: 'alice' },
      'a sub beyond 2^64-1': { sub: '18446744073709551616' },
      'a negative sub': { sub: '-5' },
    })) {
      const token = await signed(claims);
      const reply = await apply(token, body);
      assert.equal(reply.statusCode, 400, `${what}: ${reply.body}`);
      assert.equal(problemName(reply), 'TOKEN_NO_OWNER', what);
      assert.equal(reply.headers['www-authenticate'], undefined, 'a 400 carries no challenge');
      const elsewhere = await call('GET', BASE, token);
      assert.equal(elsewhere.statusCode, 401, `${what} elsewhere`);
      assert.equal(problemName(elsewhere), 'TOKEN_NO_OWNER');
    }
    // Wrong in another way too: that is what it is told as (401), not the missing owner.
    const badScope = await apply(await signed({ scope: 'root' }), body);
    assert.equal(badScope.statusCode, 401, badScope.body);
    assert.equal(problemName(badScope), 'TOKEN_INVALID');
    // Without a usable signature it is simply not a token: 401.
    const forged = await apply(await signed({}, 'another-secret-of-at-least-32-bytes-long'), body);
    assert.equal(forged.statusCode, 401);
    assert.equal(problemName(forged), 'TOKEN_INVALID');
    assert.equal((await call('POST', BASE, undefined, body)).statusCode, 401, 'no token');
  });

  it('refuses bad bodies with 400 naming each faulty field', async (t) => {
    const { apply, developer } = await setup(t, backend);
    const cases: [string, unknown, string[]][] = [
      ['an unknown grant', { name: 'x', grants: ['player:read', 'root'] }, ['body/grants/1']],
      ['no grants', { name: 'x', grants: [] }, ['body/grants']],
      ['a repeated grant', { name: 'x', grants: ['ping:read', 'ping:read'] }, ['body/grants']],
      ['grants that are not a list', { name: 'x', grants: 'player:read' }, ['body/grants']],
      ['a name of 65 characters', { name: 'n'.repeat(65), grants: ['player:read'] }, ['body/name']],
      ['an empty name', { name: '', grants: ['player:read'] }, ['body/name']],
      ['a blank name', { name: ' \t ', grants: ['player:read'] }, ['body/name']],
      ['a NUL in the name', { name: 'a\u0000b', grants: ['player:read'] }, ['body/name']],
      ['a line break in the name', { name: 'a\nb', grants: ['player:read'] }, ['body/name']],
      ['a line separator in the name', { name: 'a\u2028b', grants: ['player:read'] }, ['body/name']],
      ['a paragraph separator in the name', { name: 'a\u2029b', grants: ['player:read'] }, ['body/name']],
      ['a lone surrogate', { name: 'a\ud800b', grants: ['player:read'] }, ['body/name']],
      ['a C1 control', { name: 'a\u0085\u009b[31m', grants: ['player:read'] }, ['body/name']],
      ['a right-to-left override', { name: 'a\u202eb', grants: ['player:read'] }, ['body/name']],
      ['a name of a zero-width space', { name: '\u200b', grants: ['player:read'] }, ['body/name']],
      [
        'a description of 1001',
        { name: 'x', description: 'd'.repeat(1001), grants: ['player:read'] },
        ['body/description'],
      ],
      ['a number for a name', { name: 5, grants: ['player:read'] }, ['body/name']],
      ['no name', { grants: ['player:read'] }, ['body/name']],
      ['an unknown field', { name: 'x', grants: ['player:read'], scope: 'all' }, ['body/scope']],
      ['an owner that is no ID', { name: 'x', grants: ['player:read'], owner: -1 }, ['body/owner']],
      ['a body that is a list', [], ['body']],
    ];
    for (const [what, body, fields] of cases) {
      const reply = await apply(developer, body);
      assert.equal(reply.statusCode, 400, `${what}: ${reply.body}`);
      const reasons = problems(reply).map((problem) => problem.developer_reason);
      for (const field of fields) {
        assert.ok(
          reasons.some((reason) => reason.startsWith(`${field} `)),
          `${what}: ${field} in ${reasons}`,
        );
      }
    }
    const grant = problems(await apply(developer, { name: 'x', grants: ['player:read', 'root'] }))[0];
    assert.match(
      grant?.reason ?? '',
      /^grants\[1\] is not a grant; an application may ask for player:read, /,
    );
    const missing = await apply(developer, undefined);
    assert.equal(missing.statusCode, 400);
    assert.equal(problemName(missing), 'MISSING_FIELD');
    // The limits are inclusive, and count characters, not bytes or UTF-16 units.
    const longest = await apply(developer, {
      name: '🎮'.repeat(64),
      description: 'é'.repeat(1000),
      grants: [
        'player:read',
        'profiles:read',
        'ping:read',
        'messenger:log',
        'messenger:read',
        'messenger:write',
      ],
    });
    assert.equal(longest.statusCode, 200, longest.body);
    assert.equal(json(longest).name, '🎮'.repeat(64));
  });

  it('refuses grants only an operator gives, by name, and stores nothing', async (t) => {
    const { apply, developer, reviewer, call } = await setup(t, backend);
    for (const grant of ['applications:review', 'ping:write', 'messenger:audit']) {
      const reply = await apply(developer, { name: 'x', grants: ['player:read', grant] });
      assert.equal(reply.statusCode, 400, `${grant}: ${reply.body}`);
      const [problem, ...more] = problems(reply);
      assert.equal(more.length, 0);
      assert.equal(problem?.name, 'OPERATOR_ONLY_GRANT');
      assert.match(problem?.reason ?? '', new RegExp(`^${grant} can only be given by an operator`));
      assert.match(problem?.developer_reason ?? '', new RegExp(grant));
    }
    const both = problems(
      await apply(developer, { name: 'x', grants: ['ping:write', 'messenger:audit'] }),
    )[0];
    assert.match(both?.reason ?? '', /^ping:write, messenger:audit can only be given/);
    const listed = json(await call('GET', `${BASE}?owner=${DEVELOPER}`, reviewer));
    assert.deepEqual(listed.data, [], 'nothing was stored');
  });

  it('lets only an operator approve an application made before the tiers that asks for an operator grant', async (t) => {
    const test = await setup(t, backend);
    const id = await test.inState('pending');
    // As an older version stored it, when an application could ask for ping:write.
    await sql`update applications set grants = 'player:read ping:write' where id = ${id}`.execute(
      test.app.db,
    );
    const refused = await test.act(test.reviewer, id, 'approve');
    assert.equal(refused.statusCode, 403, refused.body);
    assert.equal(problemName(refused), 'OPERATOR_ONLY_GRANT');
    assert.match(problems(refused)[0]?.developer_reason ?? '', /ping:write.*command line/);
    assert.equal(json(await test.call('GET', `${BASE}/${id}`, test.reviewer)).currentState, 'pending');
    // Rejecting it is still a reviewer's to do.
    assert.equal((await test.act(test.reviewer, id, 'reject')).statusCode, 200);
  });

  it('allows a bounded number of pending applications per owner (409 beyond), exactly under concurrency', async (t) => {
    const { apply, act, developer, token } = await setup(t, backend, {
      APPLICATIONS_MAX_PENDING_PER_OWNER: '3',
    });
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        apply(developer, { name: `app ${index}`, grants: ['player:read'] }),
      ),
    );
    const statuses = replies.map((reply) => reply.statusCode).sort();
    assert.deepEqual(statuses, [200, 200, 200, 409, 409, 409, 409, 409, 409, 409]);
    const refused = replies.find((reply) => reply.statusCode === 409);
    assert.ok(refused);
    assert.equal(problemName(refused), 'TOO_MANY_PENDING_APPLICATIONS');
    assert.match(problems(refused)[0]?.developer_reason ?? '', /at most 3 pending/);
    // Another owner is not affected; a decision frees a place.
    assert.equal((await apply(await token(7n), { name: 'x', grants: ['ping:read'] })).statusCode, 200);
    const first = json(replies.find((reply) => reply.statusCode === 200) as Reply);
    assert.equal((await act(developer, first.id, 'withdraw')).statusCode, 200);
    assert.equal((await apply(developer, { name: 'again', grants: ['player:read'] })).statusCode, 200);
    assert.equal((await apply(developer, { name: 'over', grants: ['player:read'] })).statusCode, 409);
  });

  it('allows exactly the transitions of the state table, and names the state and the next ones otherwise', async (t) => {
    const { act, developer, reviewer, inState, call } = await setup(t, backend);
    for (const state of STATES) {
      for (const action of ACTIONS) {
        const id = await inState(state);
        const reply = await act(action === 'withdraw' ? developer : reviewer, id, action, {
          reason: `${action} it`,
        });
        const target = ALLOWED[state][action];
        if (target) {
          assert.equal(reply.statusCode, 200, `${state} -> ${action}: ${reply.body}`);
          const application = json(reply);
          assert.equal(application.currentState, target);
          const last = application.history.at(-1);
          assert.deepEqual(
            { from: last.from, to: last.to, reason: last.reason, actor: last.actor },
            {
              from: state,
              to: target,
              reason: `${action} it`,
              actor: (action === 'withdraw' ? DEVELOPER : REVIEWER).toString(),
            },
          );
        } else {
          assert.equal(reply.statusCode, 409, `${state} -> ${action}: ${reply.body}`);
          assert.equal(problemName(reply), 'APPLICATION_STATE_CONFLICT');
          const allowed = Object.values(ALLOWED[state]);
          const reason = problems(reply)[0]?.developer_reason ?? '';
          assert.match(reason, new RegExp(`^the application is ${state}[;,]`));
          if (allowed.length === 0) assert.match(reason, /final state/);
          else assert.match(reason, new RegExp(`can only become ${allowed.join(' or ')}$`));
          const after = json(await call('GET', `${BASE}/${id}`, reviewer));
          assert.equal(after.currentState, state, 'a refused change changes nothing');
          assert.equal(after.history.length, PATH_TO[state].length + 1, 'and records nothing');
        }
      }
    }
  });

  it('keeps the history: who, when, from, to and why, oldest first', async (t) => {
    const { act, call, apply, developer, reviewer } = await setup(t, backend);
    const { id } = json(await apply(developer, { name: 'x', grants: ['player:read'] }));
    await act(reviewer, id, 'approve', { reason: 'looks fine' });
    await act(reviewer, id, 'revoke', {});
    const read = await call('GET', `${BASE}/${id}`, developer);
    assert.equal(read.statusCode, 200, read.body);
    const { history } = json(read);
    assert.deepEqual(
      history.map((entry: Record<string, unknown>) => [entry.from, entry.to, entry.actor, entry.reason]),
      [
        [null, 'pending', DEVELOPER.toString(), null],
        ['pending', 'approved', REVIEWER.toString(), 'looks fine'],
        ['approved', 'revoked', REVIEWER.toString(), null],
      ],
    );
    const times = history.map((entry: { at: string }) => Date.parse(entry.at));
    assert.deepEqual(
      [...times].sort((a, b) => a - b),
      times,
      'oldest first',
    );
    assert.equal(json(read).credential, undefined, 'no credential in an application');
    assert.equal(json(read).key.ended_reason, 'application_revoked');
  });

  it('says who may do what: 401, 403, 404 and 400 for a malformed id', async (t) => {
    const { act, call, apply, developer, reviewer, token, inState } = await setup(t, backend);
    const id = await inState('pending');
    const stranger = await token(42n, ['player:read', 'messenger:write']);
    for (const action of ['approve', 'reject', 'revoke'] as const) {
      for (const who of [developer, stranger]) {
        const reply = await act(who, id, action);
        assert.equal(reply.statusCode, 403, `${action}: ${reply.body}`);
        assert.equal(problemName(reply), 'GRANT_MISSING');
        assert.match(String(reply.headers['www-authenticate']), /scope="applications:review"/);
      }
    }
    const notYours = await act(stranger, id, 'withdraw');
    assert.equal(notYours.statusCode, 403);
    assert.equal(problemName(notYours), 'NOT_APPLICATION_OWNER');
    const reviewerWithdraws = await act(reviewer, id, 'withdraw');
    assert.equal(reviewerWithdraws.statusCode, 403, 'withdrawing is the owner’s alone');
    assert.equal(problemName(reviewerWithdraws), 'NOT_APPLICATION_OWNER');
    const read = await call('GET', `${BASE}/${id}`, stranger);
    assert.equal(read.statusCode, 403);
    assert.equal(problemName(read), 'NOT_RESOURCE_OWNER');
    assert.equal((await call('GET', `${BASE}/${id}`, developer)).statusCode, 200, 'its owner reads it');
    assert.equal((await call('GET', `${BASE}/${id}`, reviewer)).statusCode, 200, 'a reviewer reads it');

    const unknown = randomUUID();
    for (const action of ACTIONS) {
      const reply = await act(action === 'withdraw' ? developer : reviewer, unknown, action);
      assert.equal(reply.statusCode, 404, `${action}: ${reply.body}`);
      assert.equal(problemName(reply), 'APPLICATION_NOT_FOUND');
    }
    assert.equal((await call('GET', `${BASE}/${unknown}`, reviewer)).statusCode, 404);
    for (const bad of ['x', `${id}x`, id.toUpperCase(), '..%2F..%2Fetc', "1'%20or%20'1'='1"]) {
      const reply = await call('GET', `${BASE}/${bad}`, reviewer);
      assert.equal(reply.statusCode, 400, `${bad}: ${reply.body}`);
      assert.equal((await act(reviewer, bad, 'approve')).statusCode, 400, bad);
    }
    for (const action of ACTIONS) {
      assert.equal((await act('', id, action)).statusCode, 401, `${action} without a token`);
    }
    // A reviewer's own application needs someone else's approval.
    const own = json(await apply(reviewer, { name: 'mine', grants: ['player:read'] })).id;
    const self = await act(reviewer, own, 'approve');
    assert.equal(self.statusCode, 403);
    assert.equal(problemName(self), 'OWN_APPLICATION_REVIEW');
    assert.equal((await act(await token(9n, ['applications:review']), own, 'approve')).statusCode, 200);
  });

  it('refuses bad change bodies, and takes none at all', async (t) => {
    const { act, app, reviewer, inState } = await setup(t, backend);
    const id = await inState('pending');
    for (const body of [{ reason: 'r'.repeat(501) }, { reason: 5 }, { why: 'x' }, { reason: 'a\u0000' }]) {
      const reply = await act(reviewer, id, 'reject', body);
      assert.equal(reply.statusCode, 400, `${JSON.stringify(body)}: ${reply.body}`);
    }
    const malformed = await app.inject({
      method: 'POST',
      url: `${BASE}/${id}/reject`,
      headers: { ...bearer(reviewer), 'content-type': 'application/json' },
      payload: '{"reason": ',
    });
    assert.equal(malformed.statusCode, 400);
    assert.equal(problemName(malformed), 'MALFORMED_JSON');
    const noBody = await app.inject({
      method: 'POST',
      url: `${BASE}/${id}/reject`,
      headers: bearer(reviewer),
    });
    assert.equal(noBody.statusCode, 200, noBody.body);
    assert.equal(json(noBody).history.at(-1).reason, null);
  });

  it('approval makes a key for the owner and answers no secret; revocation ends the key and every token from it', async (t) => {
    const { act, apply, call, developer, identity, reviewer, tokensOf } = await setup(t, backend);
    const { id } = json(await apply(developer, { name: 'x', grants: ['player:read', 'ping:read'] }));
    assert.equal(json(await call('GET', `${BASE}/${id}`, developer)).key, null, 'no key before approval');
    const before = await tokensOf(DEVELOPER);
    const approved = await act(reviewer, id, 'approve');
    assert.equal(approved.statusCode, 200, approved.body);
    assert.doesNotMatch(approved.body, /pds_|eyJ|"token"|credential/, 'no key and no token in the answer');
    assert.equal(json(approved).key.state, 'uncollected');
    assert.deepEqual(await tokensOf(DEVELOPER), before, 'approval issues no token');

    const withGrants = await call('POST', `${BASE}/${id}/key`, developer);
    assert.equal(withGrants.statusCode, 403, 'a token that carries grants manages no key');
    assert.equal(problemName(withGrants), 'IDENTITY_REQUIRED');
    const collected = await call('POST', `${BASE}/${id}/key`, identity);
    assert.equal(collected.statusCode, 200, collected.body);
    const { key } = json(collected);
    const exchanged = await call('POST', '/auth/token', undefined, { key });
    assert.equal(exchanged.statusCode, 200, exchanged.body);
    const whoami = (token: string) => call('GET', '/test/whoami', token);
    const first = json(exchanged).token;
    const works = await whoami(first);
    assert.equal(works.statusCode, 200, works.body);
    assert.equal(works.body, '{"owner":18446744073709551615,"grants":["player:read","ping:read"]}');
    const refreshed = await call('POST', '/auth/refresh', undefined, { token: first });
    assert.equal(refreshed.statusCode, 200, refreshed.body);
    const successor = json(refreshed).token;
    const second = json(await call('POST', '/auth/token', undefined, { key })).token;

    const revoked = await act(reviewer, id, 'revoke', { reason: 'abuse' });
    assert.equal(revoked.statusCode, 200, revoked.body);
    assert.equal(json(revoked).key.state, 'ended');
    assert.equal(json(revoked).key.ended_reason, 'application_revoked');
    for (const token of [first, successor, second]) {
      const reply = await whoami(token);
      assert.equal(reply.statusCode, 401, reply.body);
      assert.equal(problemName(reply), 'TOKEN_REVOKED');
    }
    assert.equal((await call('POST', '/auth/refresh', undefined, { token: successor })).statusCode, 401);
    const afterwards = await call('POST', '/auth/token', undefined, { key });
    assert.equal(afterwards.statusCode, 401, 'the key has ended');
    assert.equal(problemName(afterwards), 'KEY_INVALID');
    assert.equal((await whoami(developer)).statusCode, 200, "the owner's other tokens are not touched");
  });

  it('revocation racing refreshes and key exchanges leaves no token of the application alive', async (t) => {
    const { act, apply, call, developer, identity, reviewer } = await setup(t, backend);
    for (let round = 0; round < 15; round++) {
      const { id } = json(await apply(developer, { name: `race ${round}`, grants: ['player:read'] }));
      await act(reviewer, id, 'approve');
      const { key } = json(await call('POST', `${BASE}/${id}/key`, identity));
      const { token } = json(await call('POST', '/auth/token', undefined, { key }));
      const [refreshed, exchanged, revoked] = await Promise.all([
        call('POST', '/auth/refresh', undefined, { token }),
        call('POST', '/auth/token', undefined, { key }),
        act(reviewer, id, 'revoke'),
      ]);
      assert.equal(revoked.statusCode, 200, revoked.body);
      for (const alive of [
        token,
        ...[refreshed, exchanged]
          .filter((reply) => reply.statusCode === 200)
          .map((reply) => json(reply).token),
      ]) {
        const reply = await call('GET', '/test/whoami', alive);
        assert.equal(
          reply.statusCode,
          401,
          `round ${round}: a token of the application survived its revocation`,
        );
      }
    }
  });

  it('two concurrent changes of one application: exactly one succeeds, and one key exists', async (t) => {
    const { act, app, developer, reviewer, token, inState } = await setup(t, backend);
    const second = await token(8n, ['applications:review']);
    const approvedIds: string[] = [];
    for (let round = 0; round < 4; round++) {
      const id = await inState('pending');
      approvedIds.push(id);
      const replies = await Promise.all([act(reviewer, id, 'approve'), act(second, id, 'approve')]);
      assert.deepEqual(
        replies.map((reply) => reply.statusCode).sort(),
        [200, 409],
        replies.map((r) => r.body).join('\n'),
      );
      const lost = replies.find((reply) => reply.statusCode === 409) as Reply;
      assert.match(problems(lost)[0]?.developer_reason ?? '', /^the application is approved;/);
    }
    const { rows } = await sql<{
      application_id: string;
    }>`select application_id from application_keys`.execute(app.db);
    assert.deepEqual(
      rows.map((row) => row.application_id).sort(),
      [...approvedIds].sort(),
      'one key per approval',
    );
    for (let round = 0; round < 4; round++) {
      const id = await inState('pending');
      const replies = await Promise.all([
        act(reviewer, id, 'approve'),
        act(developer, id, 'withdraw'),
        act(second, id, 'reject'),
      ]);
      assert.equal(
        replies.filter((reply) => reply.statusCode === 200).length,
        1,
        replies.map((r) => r.body).join('\n'),
      );
      assert.equal(replies.filter((reply) => reply.statusCode === 409).length, 2);
    }
  });

  it('approval and its key commit together; revocation and the end of its tokens likewise', async (t) => {
    const { act, app, call, identity, reviewer, inState } = await setup(t, backend);
    const id = await inState('pending');
    await failWritesTo(app.db, backend, 'application_keys', 'INSERT');
    const failed = await act(reviewer, id, 'approve');
    assert.equal(failed.statusCode, 500, failed.body);
    assert.equal(problemName(failed), 'INTERNAL_ERROR');
    assert.doesNotMatch(failed.body, /application_keys|trigger|insert/i, 'the 500 reveals nothing');
    const read = json(await call('GET', `${BASE}/${id}`, reviewer));
    assert.equal(read.currentState, 'pending', 'no approved application without its key');
    assert.equal(read.history.length, 1);
    assert.equal(read.key, null);
    await restoreWritesTo(app.db, backend, 'application_keys');
    const approved = await act(reviewer, id, 'approve');
    assert.equal(approved.statusCode, 200, approved.body);
    const { key } = json(await call('POST', `${BASE}/${id}/key`, identity));
    const { token } = json(await call('POST', '/auth/token', undefined, { key }));

    // Revocation: if the tokens made from the key cannot be revoked, the application stays approved.
    await failWritesTo(app.db, backend, 'tokens', 'UPDATE');
    assert.equal((await act(reviewer, id, 'revoke')).statusCode, 500);
    assert.equal(json(await call('GET', `${BASE}/${id}`, reviewer)).currentState, 'approved');
    assert.equal((await call('GET', '/test/whoami', token)).statusCode, 200);
    assert.equal((await call('POST', '/auth/token', undefined, { key })).statusCode, 200, 'the key too');
    await restoreWritesTo(app.db, backend, 'tokens');
    assert.equal((await act(reviewer, id, 'revoke')).statusCode, 200);
    assert.equal((await call('GET', '/test/whoami', token)).statusCode, 401);
  });

  it('approvals are not limited per address: they hand out nothing secret', async (t) => {
    const { act, reviewer, inState } = await setup(t, backend, { RATE_LIMIT_AUTH_PER_MINUTE: '1' });
    for (let round = 0; round < 3; round++) {
      const reply = await act(reviewer, await inState('pending'), 'approve');
      assert.equal(reply.statusCode, 200, reply.body);
      assert.doesNotMatch(String(reply.headers['ratelimit-policy']), /"address"/);
    }
  });

  it('lists newest first, page by page, without gaps or repeats, even while applications arrive', async (t) => {
    const { call, apply, token, reviewer, developer } = await setup(t, backend);
    const owners = [DEVELOPER, 2n, 3n, 4n, 5n];
    const tokens = new Map<bigint, string>([[DEVELOPER, developer]]);
    for (const owner of owners.slice(1)) tokens.set(owner, await token(owner));
    const created: { id: string; owner: string }[] = [];
    for (let index = 0; index < 23; index++) {
      const owner = owners[index % owners.length] as bigint;
      const reply = await apply(tokens.get(owner) as string, {
        name: `app ${index}`,
        grants: ['player:read'],
      });
      assert.equal(reply.statusCode, 200, reply.body);
      created.push({ id: json(reply).id, owner: owner.toString() });
    }
    const walk = async (auth: string, query: string, limit: number, during?: () => Promise<void>) => {
      const seen: { id: string; applied_at: string; owner: number }[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const url: string = `${BASE}?limit=${limit}${query}${cursor ? `&cursor=${cursor}` : ''}`;
        const reply = await call('GET', url, auth);
        assert.equal(reply.statusCode, 200, reply.body);
        const page = json(reply);
        assert.ok(page.data.length <= limit);
        seen.push(...page.data);
        cursor = page.next_cursor;
        pages++;
        if (pages === 2) await during?.();
      } while (cursor !== null);
      return { seen, pages };
    };

    const arrivals: string[] = [];
    const all = await walk(reviewer, '', 4, async () => {
      for (let index = 0; index < 3; index++) {
        arrivals.push(
          json(await apply(await token(100n + BigInt(index)), { name: 'late', grants: ['ping:read'] })).id,
        );
      }
    });
    const ids = all.seen.map((application) => application.id);
    assert.equal(new Set(ids).size, ids.length, 'no repeats');
    assert.deepEqual(
      [...ids].sort(),
      created.map((entry) => entry.id).sort(),
      'no gaps; later arrivals come on top',
    );
    assert.equal(all.pages, 6);
    const times = all.seen.map((application) => Date.parse(application.applied_at));
    assert.deepEqual(
      times,
      [...times].sort((a, b) => b - a),
      'newest first',
    );
    const fresh = await walk(reviewer, '', 100);
    assert.deepEqual(
      fresh.seen
        .slice(0, 3)
        .map((application) => application.id)
        .sort(),
      [...arrivals].sort(),
    );

    // Filters: by owner and by state (a reviewer), and a developer's own only.
    const byOwner = await walk(reviewer, '&owner=2', 2);
    assert.deepEqual(
      byOwner.seen.map((application) => application.id).sort(),
      created
        .filter((entry) => entry.owner === '2')
        .map((entry) => entry.id)
        .sort(),
    );
    const approvedId = created[0]?.id as string;
    assert.equal((await call('POST', `${BASE}/${approvedId}/approve`, reviewer)).statusCode, 200);
    const approved = await walk(reviewer, '&state=approved', 10);
    assert.deepEqual(
      approved.seen.map((application) => application.id),
      [approvedId],
    );
    const pendingOfDeveloper = await walk(reviewer, `&state=pending&owner=${DEVELOPER}`, 10);
    assert.equal(pendingOfDeveloper.seen.length, 4);
    const own = await walk(developer, '', 3);
    assert.deepEqual(
      own.seen.map((application) => application.id).sort(),
      created
        .filter((entry) => entry.owner === DEVELOPER.toString())
        .map((entry) => entry.id)
        .sort(),
      'without the review grant, your own only',
    );
    assert.match((await call('GET', BASE, developer)).body, /"owner":18446744073709551615,/);
    assert.equal((await call('GET', `${BASE}?owner=${DEVELOPER}`, developer)).statusCode, 200);
    const others = await call('GET', `${BASE}?owner=2`, developer);
    assert.equal(others.statusCode, 403);
    assert.equal(problemName(others), 'NOT_RESOURCE_OWNER');
  });

  it('refuses bad list queries with 400', async (t) => {
    const { call, reviewer } = await setup(t, backend);
    for (const query of [
      'limit=0',
      'limit=101',
      'limit=x',
      'state=lost',
      'owner=abc',
      'owner=18446744073709551616',
      'cursor=garbage',
      `cursor=${Buffer.from('1.x').toString('base64url')}`,
      `cursor=${'a'.repeat(201)}`,
      'sort=name',
    ]) {
      const reply = await call('GET', `${BASE}?${query}`, reviewer);
      assert.equal(reply.statusCode, 400, `${query}: ${reply.body}`);
    }
    assert.equal((await call('GET', BASE)).statusCode, 401);
    const empty = await call('GET', BASE, reviewer);
    assert.equal(empty.statusCode, 200);
    assert.deepEqual(json(empty), { data: [], next_cursor: null });
  });
});

/** Makes every `operation` on `table` fail, as a database refusing a write midway would. */
async function failWritesTo(
  db: Kysely<object>,
  backend: Backend,
  table: string,
  operation: 'INSERT' | 'UPDATE',
): Promise<void> {
  if (backend.dialect === 'sqlite') {
    await sql
      .raw(
        `create trigger fail_${table} before ${operation} on ${table} begin select raise(abort, 'read-only'); end`,
      )
      .execute(db);
    return;
  }
  await sql
    .raw(
      `create or replace function fail_writes() returns trigger as $$ begin raise exception 'read-only'; end $$ language plpgsql;
       create trigger fail_${table} before ${operation} on ${table} for each row execute function fail_writes()`,
    )
    .execute(db);
}

async function restoreWritesTo(db: Kysely<object>, backend: Backend, table: string): Promise<void> {
  await sql
    .raw(
      backend.dialect === 'sqlite' ? `drop trigger fail_${table}` : `drop trigger fail_${table} on ${table}`,
    )
    .execute(db);
}
