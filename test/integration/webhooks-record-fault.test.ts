// A storage fault while the dispatcher records an attempt the receiver has already answered: the
// record is written once the storage is back, and the receiver gets the event once. On SQLite the
// fault is the write lock held by another connection past busy_timeout; on PostgreSQL a trigger on
// the attempts table raises insufficient_resources (SQLSTATE 53000) while it is in place.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { openInspector, type Inspector } from '../helpers/sqlite-inspect.js';
import { recordAttempt } from '../../relay/storage/webhooks.js';
import type { TestRelay } from '../helpers/start-relay.js';
import { createEndpoint, relayAndReceiver, sleep, startWebhookBarrier, waitForAttempts } from '../helpers/webhooks.js';

/** SQLite's busy_timeout on the relay's writer (storage/db.ts): the lock is held a little longer. */
const SQLITE_BUSY_TIMEOUT_MS = 5_000;

interface StorageFault {
  inject(): Promise<void>;
  clear(): Promise<void>;
  /** How long the fault lasts once the receiver has answered: long enough for a write to fail. */
  lastsMs: number;
}

function storageFault(t: TestRelay): StorageFault {
  const { db } = t.relay.services;
  if (db.dialect === 'sqlite') {
    let holder: Inspector | undefined;
    return {
      async inject() {
        holder = await openInspector(path.join(t.dataDir, 'raven.sqlite'));
        await holder.exec('BEGIN EXCLUSIVE');
      },
      async clear() {
        await holder!.exec('ROLLBACK');
        await holder!.close();
      },
      lastsMs: SQLITE_BUSY_TIMEOUT_MS + 1_000,
    };
  }
  return {
    async inject() {
      await db.write(async (tx) => {
        await tx.run(`CREATE FUNCTION raven_test_fault() RETURNS trigger LANGUAGE plpgsql AS $$
                        BEGIN RAISE EXCEPTION 'injected storage fault' USING ERRCODE = '53000'; END $$`);
        await tx.run('CREATE TRIGGER raven_test_fault BEFORE INSERT ON webhook_attempts FOR EACH ROW EXECUTE FUNCTION raven_test_fault()');
      });
    },
    async clear() {
      await db.write(async (tx) => {
        await tx.run('DROP TRIGGER raven_test_fault ON webhook_attempts');
        await tx.run('DROP FUNCTION raven_test_fault()');
      });
    },
    lastsMs: 1_000,
  };
}

const env = relayAndReceiver();

test('an attempt whose record meets a storage fault is recorded once the storage is back, not sent again', { timeout: 60_000 }, async () => {
  const { t, receiver } = env;
  const hookId = (await createEndpoint(t, receiver.url, ['email.queued'])).id;
  const fault = storageFault(t);
  let cleared: Promise<void> | undefined;
  receiver.answer = async () => {
    await fault.inject();
    cleared = sleep(fault.lastsMs).then(() => fault.clear());
    return { status: 200 };
  };
  const sent = await t.send({ subject: 'Recorded once' });
  assert.equal(sent.status, 202, sent.text);
  await receiver.waitForCount(1);
  receiver.answer = () => ({ status: 200 });
  while (cleared === undefined) await sleep(10);
  await cleared;

  const [attempt, ...more] = await waitForAttempts(t, hookId, 1, 15_000);
  assert.deepEqual(more, [], 'one attempt recorded');
  assert.equal(attempt!.status_code, 200, JSON.stringify(attempt));
  assert.equal(attempt!.next_attempt_at, null, `delivered, nothing more due: ${JSON.stringify(attempt)}`);

  // Every delivery due by now has been sent once the barrier's has: none was the event again.
  const barrier = await startWebhookBarrier(t);
  try {
    await barrier.pass();
  } finally {
    await barrier.close();
  }
  assert.equal(receiver.requests.length, 1, 'the receiver got the event once');
  assert.equal((await waitForAttempts(t, hookId, 1)).length, 1);
});

test('an attempt record written again (a retry after a COMMIT whose answer was lost) is stored once', async () => {
  const { t, receiver } = env;
  const hookId = (await createEndpoint(t, receiver.url, ['email.queued'])).id;
  assert.equal((await t.send({ subject: 'Written twice' })).status, 202);
  const [shown] = await waitForAttempts(t, hookId, 1);
  const { db } = t.relay.services;
  const row = (await db.get<{ delivery_id: number; attempt: number; attempted_at: string; duration_ms: number }>(
    'SELECT a.delivery_id, a.attempt, a.attempted_at, a.duration_ms FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.webhook_id = ?',
    [hookId],
  ))!;
  await db.write((tx) =>
    recordAttempt(tx, {
      deliveryId: row.delivery_id,
      attempt: row.attempt,
      statusCode: 200,
      error: null,
      attemptedAt: row.attempted_at,
      durationMs: row.duration_ms,
      responseBody: shown!.response_body,
      responseTruncated: false,
      state: 'delivered',
      nextAttemptAt: null,
    }),
  );
  assert.deepEqual(await waitForAttempts(t, hookId, 1), [shown]);
});
