import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError, ErrorKinds, errorCatalogue, InputError } from '../../../src/platform/errors.js';
import { challengeOf } from '../../../src/platform/http/auth-challenge.js';
import { inBody, inQuery } from '../../../src/platform/http/input-errors.js';

const REALM = 'Bearer realm="player-data-service"';

describe("the HTTP layer's shaping of domain errors", () => {
  it('gives every 401 and 403 of the catalogue its challenge, decided kind by kind', () => {
    // A new kind answered 401 or 403 must be placed here, and its challenge decided.
    const expected: Record<string, string> = {
      TOKEN_MISSING: REALM,
      TOKEN_INVALID: `${REALM}, error="invalid_token"`,
      TOKEN_EXPIRED: `${REALM}, error="invalid_token"`,
      TOKEN_REVOKED: `${REALM}, error="invalid_token"`,
      TOKEN_REUSED: `${REALM}, error="invalid_token"`,
      TOKEN_NO_OWNER: `${REALM}, error="invalid_token"`,
      KEY_INVALID: `${REALM}, error="invalid_token"`,
      SESSION_INVALID: REALM,
      CSRF_TOKEN_INVALID: REALM,
      GRANT_MISSING: `${REALM}, error="insufficient_scope"`,
      NOT_RESOURCE_OWNER: `${REALM}, error="insufficient_scope"`,
      IDENTITY_REQUIRED: `${REALM}, error="insufficient_scope"`,
      NOT_APPLICATION_OWNER: `${REALM}, error="insufficient_scope"`,
      OWN_APPLICATION_REVIEW: `${REALM}, error="insufficient_scope"`,
    };
    const refusals = errorCatalogue.filter((kind) => kind.status === 401 || kind.status === 403);
    assert.deepEqual(refusals.map((kind) => kind.name).sort(), Object.keys(expected).sort());
    for (const kind of refusals) assert.equal(challengeOf(AppError.of(kind)), expected[kind.name], kind.name);
  });

  it("names a refusal's grant as the challenge's scope, and challenges no other status", () => {
    const refused = AppError.of(ErrorKinds.NOT_RESOURCE_OWNER, { grant: 'messenger:audit' });
    assert.equal(challengeOf(refused), `${REALM}, error="insufficient_scope", scope="messenger:audit"`);
    const operatorOnly = AppError.of(ErrorKinds.OPERATOR_ONLY_GRANT, { forbidden: true });
    assert.equal(operatorOnly.status, 403, 'a refusal of the caller whatever the kind says');
    assert.equal(challengeOf(operatorOnly), `${REALM}, error="insufficient_scope"`);
    assert.equal(challengeOf(AppError.of(ErrorKinds.OPERATOR_ONLY_GRANT)), undefined, 'a 400 has none');
    const noOwner400 = new AppError(AppError.of(ErrorKinds.TOKEN_NO_OWNER).problems, { status: 400 });
    assert.equal(challengeOf(noOwner400), undefined);
    // A token is not the scope of an invalid token: only a refusal of what a token reaches names one.
    assert.equal(
      challengeOf(AppError.of(ErrorKinds.TOKEN_REVOKED, { grant: 'player:read' })),
      `${REALM}, error="invalid_token"`,
    );
  });

  it("names each field of an InputError by its place in the request part the route gave, with the part's cause", () => {
    const error = new InputError([
      { field: ['samples', 3, 'at'], rule: 'must be in the past' },
      { field: ['a/b~c'], rule: 'is wrong', developerRule: 'is wrong, says the developer' },
      {
        field: ['from'],
        rule: 'must not be after to',
        developerRule: (name) => `(5) must not be after ${name(['to'])} (4)`,
      },
      { kind: ErrorKinds.OPERATOR_ONLY_GRANT, reason: 'whole', developerReason: 'whole, for the developer' },
    ]);
    // Answered as it is (no route said where the input was), fields are named as an end user reads them.
    assert.equal(error.summary, 'Bad request');
    assert.deepEqual(
      error.problems.map((problem) => [problem.kind.name, problem.reason, problem.developerReason]),
      [
        ['INVALID_FIELD', 'samples[3].at must be in the past', 'samples[3].at must be in the past'],
        ['INVALID_FIELD', 'a/b~c is wrong', 'a/b~c is wrong, says the developer'],
        ['INVALID_FIELD', 'from must not be after to', 'from (5) must not be after to (4)'],
        ['OPERATOR_ONLY_GRANT', 'whole', 'whole, for the developer'],
      ],
    );
    const thrown = (convert: (error: unknown) => never, error: unknown): unknown => {
      try {
        convert(error);
      } catch (caught) {
        return caught;
      }
      assert.fail('nothing was thrown');
    };
    const body = thrown(inBody, error);
    assert.ok(body instanceof AppError && !(body instanceof InputError));
    assert.equal(body.status, 400);
    assert.equal(body.summary, 'Invalid request body');
    assert.deepEqual(
      body.problems.map((problem) => [problem.reason, problem.developerReason]),
      [
        ['samples[3].at must be in the past', 'body/samples/3/at must be in the past'],
        ['a/b~c is wrong', 'body/a~1b~0c is wrong, says the developer'],
        ['from must not be after to', 'body/from (5) must not be after body/to (4)'],
        ['whole', 'whole, for the developer'],
      ],
    );
    const query = thrown(inQuery, error);
    assert.ok(query instanceof AppError);
    assert.equal(query.summary, 'Invalid query string');
    assert.equal(query.problems[2]?.developerReason, 'query/from (5) must not be after query/to (4)');
  });

  it('leaves any other error as it is', () => {
    const other = AppError.of(ErrorKinds.PLAYER_NOT_FOUND);
    assert.throws(
      () => inBody(other),
      (error) => error === other,
    );
    const bug = new Error('a bug');
    assert.throws(
      () => inQuery(bug),
      (error) => error === bug,
    );
  });
});
