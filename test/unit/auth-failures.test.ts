// The failure budget for guessed secrets (relay/auth-failures.ts): slower answers, then a refusal
// past 10 failures in a minute that lifts as the failures age out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AuthFailures, MAX_AUTH_FAILURES } from '../../relay/auth-failures.js';

test('more than 10 failures in a minute exhaust an address until they age out; other addresses are untouched', () => {
  let now = 1_000_000;
  const failures = new AuthFailures(() => now);
  const delays: number[] = [];
  for (let i = 0; i < MAX_AUTH_FAILURES; i++) {
    const { delayMs, exhausted } = failures.record('198.51.100.7');
    delays.push(delayMs);
    assert.equal(exhausted, false);
    now += 1_000;
  }
  assert.deepEqual(delays, [100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]);
  assert.equal(failures.retryAfterSeconds('198.51.100.7'), undefined);
  assert.equal(failures.record('198.51.100.7').exhausted, true, 'the eleventh failure uses the budget up');
  assert.equal(failures.exhausted('198.51.100.7'), true);
  // The first failure (at 1,000,000) leaves the window at 1,060,000; now is 1,010,000.
  assert.equal(failures.retryAfterSeconds('198.51.100.7'), 50);
  assert.equal(failures.exhausted('203.0.113.9'), false);
  now = 1_060_001;
  assert.equal(failures.exhausted('198.51.100.7'), false);
  assert.equal(failures.retryAfterSeconds('198.51.100.7'), undefined);
});
