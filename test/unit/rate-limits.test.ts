// The SQLite relay's rate windows in memory (relay/domain/rate-limits.ts): a window of a busy key
// holds an entry per millisecond, and the entries that slid out are cut off only now and then;
// the window must count the same across those cuts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KeyPrincipal } from '../../relay/domain/auth.js';
import { RateLimiter } from '../../relay/domain/rate-limits.js';
import type { LimitsConfig } from '../../relay/config.js';

const KEY: KeyPrincipal = { keyId: 'key_1', projectId: 'prj_1', workspaceId: 'ws_1', prefix: 'rr_live_', permission: 'email:send', testMode: false };

test('a window full of one-millisecond entries admits its limit in every second, past the cuts of slid-out entries', () => {
  const limit = 300; // above the number of slid-out entries that are cut off at once
  const limiter = new RateLimiter({ keyPerSecond: limit, workspacePerSecond: 0, testKeyPerMinute: 0 } as unknown as LimitsConfig);
  const admitted: number[] = [];
  for (let t = 0; t < 3_000; t++) {
    const refused = limiter.check(KEY, t);
    if (refused) {
      assert.ok(refused.retryAfter >= 1);
      continue;
    }
    limiter.record(KEY, t);
    admitted.push(t);
  }
  // One a millisecond from the start of each second until the window is full, then none until the
  // first of them slides out.
  const expected = [0, 1000, 2000].flatMap((start) => Array.from({ length: limit }, (_, i) => start + i));
  assert.deepEqual(admitted, expected);
});
