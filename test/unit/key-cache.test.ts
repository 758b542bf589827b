// The per-relay API-key cache: hits skip the database, unknown keys are never kept,
// and a clear() during a lookup keeps that lookup's (possibly stale) row out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { authenticateKey, KeyCache } from '../../relay/domain/auth.js';
import { hashSecret } from '../../relay/secrets.js';
import type { Db } from '../../relay/storage/db.js';

const SECRET = 'rr_test_0123456789abcdef01234567';

function fakeDb(revokedAt: () => string | null) {
  const calls = { count: 0 };
  let gate: Promise<void> = Promise.resolve();
  const db = {
    async get(_sql: string, params: unknown[]) {
      calls.count += 1;
      await gate;
      if (params[0] !== hashSecret(SECRET)) return undefined;
      return { id: 'key_1', project_id: 'prj_1', workspace_id: 'ws_1', prefix: 'rr_test_', permission: 'email:send', secret_hash: hashSecret(SECRET), revoked_at: revokedAt(), activated_at: null };
    },
  } as unknown as Db;
  return { db, calls, hold: (p: Promise<void>) => (gate = p) };
}

test('a known key is read once; unknown keys are read every time', async () => {
  const { db, calls } = fakeDb(() => null);
  const keys = new KeyCache();
  for (let i = 0; i < 3; i++) assert.equal((await authenticateKey(db, keys, `Bearer ${SECRET}`)).keyId, 'key_1');
  assert.equal(calls.count, 1);
  for (let i = 0; i < 2; i++) await assert.rejects(authenticateKey(db, keys, 'Bearer rr_test_unknown'), { code: 'invalid_api_key' });
  assert.equal(calls.count, 3);
});

test('clear() makes the next request read the database again', async () => {
  let revoked: string | null = null;
  const { db } = fakeDb(() => revoked);
  const keys = new KeyCache();
  await authenticateKey(db, keys, `Bearer ${SECRET}`);
  revoked = '2026-01-01T00:00:00.000Z';
  keys.clear();
  await assert.rejects(authenticateKey(db, keys, `Bearer ${SECRET}`), { code: 'invalid_api_key' });
});

test('a lookup in flight across clear() does not store its row', async () => {
  let revoked: string | null = null;
  const { db, calls, hold } = fakeDb(() => revoked);
  const keys = new KeyCache();
  let release!: () => void;
  hold(new Promise<void>((r) => (release = r)));
  const inFlight = authenticateKey(db, keys, `Bearer ${SECRET}`);
  keys.clear();
  release();
  await inFlight; // the read raced the write and saw the old row
  hold(Promise.resolve());
  revoked = '2026-01-01T00:00:00.000Z';
  await assert.rejects(authenticateKey(db, keys, `Bearer ${SECRET}`), { code: 'invalid_api_key' });
  assert.equal(calls.count, 2);
});
