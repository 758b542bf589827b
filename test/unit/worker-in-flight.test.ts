// How many dispatches the worker keeps in flight (relay/queue/worker.ts): all of them, fewer while
// admissions are in a burst (clients first), and more of those again when the queue falls behind
// the burst (sustained load must not queue up for its whole length), until it has caught up; two
// while the burst saturates the relay (admission first, delivery what is left).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { behindAfterClaim, inFlightLimit } from '../../relay/queue/worker.js';

describe('the worker in flight', () => {
  test('full concurrency without a burst; 8 in a burst; 32 in a burst the queue falls behind; shared among relays', () => {
    const noBurst = () => undefined;
    const alone = (allowance: (saturated: boolean) => number) => allowance(false);
    const amongThree = (allowance: (saturated: boolean) => number) => Math.max(1, Math.floor(allowance(false) / 3));
    assert.equal(inFlightLimit(64, false, noBurst), 64);
    assert.equal(inFlightLimit(64, true, noBurst), 64);
    assert.equal(inFlightLimit(64, false, alone), 8);
    assert.equal(inFlightLimit(64, true, alone), 32);
    assert.equal(inFlightLimit(64, false, amongThree), 2);
    assert.equal(inFlightLimit(64, true, amongThree), 10);
    // Never above the configured concurrency.
    assert.equal(inFlightLimit(4, false, alone), 4);
    assert.equal(inFlightLimit(16, true, alone), 16);
  });

  test('tells which limit applies', () => {
    const seen: string[] = [];
    const paced = (pacing: string) => void seen.push(pacing);
    inFlightLimit(64, true, () => undefined, paced);
    inFlightLimit(64, false, (allowance) => allowance(false), paced);
    inFlightLimit(64, true, (allowance) => allowance(false), paced);
    inFlightLimit(64, true, (allowance) => allowance(true), paced);
    // Another relay delivers the burst's allowance: this one is paced by the burst too.
    inFlightLimit(64, false, (allowance) => (allowance(false), 0), paced);
    assert.deepEqual(seen, ['full', 'burst', 'behind', 'saturated', 'burst']);
  });

  test('2 in flight while the burst saturates the relay, behind or not', () => {
    const saturated = (allowance: (saturated: boolean) => number) => allowance(true);
    assert.equal(inFlightLimit(64, false, saturated), 2);
    assert.equal(inFlightLimit(64, true, saturated), 2);
    assert.equal(inFlightLimit(1, true, saturated), 1);
  });

  test('behind from a claimed job that had waited more than 200 ms since it fell due until every one claimed had waited under 50 ms', () => {
    const now = Date.parse('2026-01-01T00:00:01.000Z');
    const due = (msAgo: number) => ({ run_at: new Date(now - msAgo).toISOString() });
    assert.equal(behindAfterClaim(false, [due(0), due(150)], now), false);
    assert.equal(behindAfterClaim(false, [due(0), due(201)], now), true);
    assert.equal(behindAfterClaim(false, [due(5_000)], now), true);
    // Once behind, a claim of jobs that waited less than 200 ms does not end it; under 50 ms does.
    assert.equal(behindAfterClaim(true, [due(0), due(150)], now), true);
    assert.equal(behindAfterClaim(true, [due(60)], now), true);
    assert.equal(behindAfterClaim(true, [due(0), due(49)], now), false);
    // A job due later than now (a test clock set back) is not behind.
    assert.equal(behindAfterClaim(false, [due(-1_000)], now), false);
    assert.equal(behindAfterClaim(true, [due(-1_000)], now), false);
  });
});
