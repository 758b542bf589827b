// The sink's activity gate (relay/inbox/capture-activity.ts), which the inbox's background work
// (index batches, checks badges) waits on: nothing waiting on it goes while a capture is in flight,
// everything goes once the sink is quiet, and the bound and the owner's stop let it go anyway.
// No timing is asserted: only what has and has not happened.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { CaptureActivity } from '../../relay/inbox/capture-activity.js';

/** Whether the promise has settled, after letting the event loop run for `ms`. */
async function settledAfter(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let settled = false;
  void promise.then(() => (settled = true));
  await sleep(ms);
  return settled;
}

test('a quiet sink lets background work go at once', async () => {
  const activity = new CaptureActivity({ quietMs: 5 });
  assert.equal(activity.busy, false);
  assert.equal(await settledAfter(activity.whenQuiet(), 0), true);
});

test('nothing goes while a capture is in flight, however long it takes; it goes once the sink is quiet', async () => {
  const activity = new CaptureActivity({ quietMs: 5 });
  activity.begin();
  activity.begin();
  const waiting = activity.whenQuiet();
  assert.equal(await settledAfter(waiting, 50), false, 'two captures in flight');
  activity.end();
  assert.equal(await settledAfter(waiting, 50), false, 'one capture still in flight');
  activity.end();
  await waiting; // quiet 5 ms after the last one ended
  assert.equal(activity.busy, false);
});

test('a capture that begins within the quiet time keeps the work waiting', async () => {
  const activity = new CaptureActivity({ quietMs: 20 });
  activity.begin();
  activity.end();
  assert.equal(activity.busy, true, 'just ended');
  const waiting = activity.whenQuiet();
  activity.begin();
  assert.equal(await settledAfter(waiting, 60), false);
  activity.end();
  await waiting;
});

test('the bound lets work go while mail never stops, and an abort lets it go at once', async () => {
  const activity = new CaptureActivity({ quietMs: 5 });
  activity.begin();
  await activity.whenQuiet(10); // resolves by the bound, the capture still in flight
  assert.equal(activity.busy, true);
  const stopping = new AbortController();
  const waiting = activity.whenQuiet(Infinity, stopping.signal);
  assert.equal(await settledAfter(waiting, 20), false);
  stopping.abort();
  await waiting;
  assert.equal(await settledAfter(activity.whenQuiet(Infinity, stopping.signal), 0), true, 'an aborted owner never waits');
  activity.end();
});
