import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createCircuitBreaker } from '../../src/upstream/circuit-breaker.js';

const COOLDOWN_MS = 1000;

function setup(failures = 3) {
  const clock = { now: 0 };
  return { breaker: createCircuitBreaker(failures, COOLDOWN_MS, { now: () => clock.now }), clock };
}

describe('circuit breaker', () => {
  it('opens after the given number of consecutive failures, and says how long until a call may go', () => {
    const { breaker, clock } = setup(3);
    breaker.failed();
    breaker.failed();
    assert.deepEqual(breaker.admit(), { allowed: true });
    breaker.failed();
    assert.equal(breaker.state, 'open');
    clock.now += 400;
    assert.deepEqual(breaker.admit(), { allowed: false, retryAfterMs: 600 });
  });

  it('counts only consecutive failures: a success in between starts the count again', () => {
    const { breaker } = setup(3);
    breaker.failed();
    breaker.failed();
    breaker.succeeded();
    breaker.failed();
    breaker.failed();
    assert.equal(breaker.state, 'closed');
  });

  it('after the cooldown lets one trial call through (half-open); its success closes the circuit', () => {
    const { breaker, clock } = setup(1);
    breaker.failed();
    clock.now += COOLDOWN_MS;
    assert.equal(breaker.state, 'half-open');
    assert.deepEqual(breaker.admit(), { allowed: true });
    assert.equal(breaker.admit().allowed, false, 'only one trial at a time');
    breaker.succeeded();
    assert.equal(breaker.state, 'closed');
    assert.deepEqual(breaker.admit(), { allowed: true });
  });

  it('opens once: requests admitted before it opened and failing after neither reopen it nor restart the cooldown', () => {
    const changes: string[] = [];
    const clock = { now: 0 };
    const breaker = createCircuitBreaker(2, COOLDOWN_MS, {
      now: () => clock.now,
      onChange: (change) => changes.push(change),
    });
    for (let request = 0; request < 5; request++) assert.ok(breaker.admit().allowed);
    breaker.failed();
    breaker.failed();
    clock.now += 300;
    breaker.failed();
    breaker.failed();
    breaker.failed();
    assert.deepEqual(changes, ['opened'], 'one change, told once');
    assert.deepEqual(breaker.admit(), { allowed: false, retryAfterMs: COOLDOWN_MS - 300 });
    clock.now += COOLDOWN_MS;
    assert.ok(breaker.admit().allowed);
    breaker.succeeded();
    assert.deepEqual(changes, ['opened', 'closed']);
  });

  it('reopens for a whole cooldown when the trial fails', () => {
    const { breaker, clock } = setup(1);
    breaker.failed();
    clock.now += COOLDOWN_MS;
    assert.ok(breaker.admit().allowed);
    breaker.failed();
    assert.equal(breaker.state, 'open');
    assert.deepEqual(breaker.admit(), { allowed: false, retryAfterMs: COOLDOWN_MS });
  });
});
