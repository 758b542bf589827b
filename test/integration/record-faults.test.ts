// A storage fault while the relay records an outcome already answered elsewhere: a webhook attempt
// the receiver answered, a delivery the provider accepted. The record is written once the storage
// is back (the work is not done again, the recipient does not end delivery_unknown), and once. On
// SQLite the fault is the write lock held by another connection past busy_timeout; on PostgreSQL a
// trigger on the table the record writes raises insufficient_resources (SQLSTATE 53000) while it
// is in place.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { openInspector, type Inspector } from '../helpers/sqlite-inspect.js';
import { recordAttempt } from '../../relay/storage/webhooks.js';
import { startFakeUpstream } from '../helpers/fake-upstream.js';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';
import { createEndpoint, relayAndReceiver, sleep, startWebhookBarrier, waitForAttempts } from '../helpers/webhooks.js';

/** SQLite's busy_timeout on the relay's writer (storage/db.ts): the lock is held a little longer. */
const SQLITE_BUSY_TIMEOUT_MS = 5_000;

interface StorageFault {
  inject(): Promise<void>;
  clear(): Promise<void>;
}

/** Writes to `table` fail while the fault is in place (on SQLite every write does). */
function storageFault(t: TestRelay, table: string): StorageFault {
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
    };
  }
  return {
    async inject() {
      await db.write(async (tx) => {
        await tx.run(`CREATE FUNCTION raven_test_fault() RETURNS trigger LANGUAGE plpgsql AS $$
                        BEGIN RAISE EXCEPTION 'injected storage fault' USING ERRCODE = '53000'; END $$`);
        await tx.run(`CREATE TRIGGER raven_test_fault BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION raven_test_fault()`);
      });
    },
    async clear() {
      await db.write(async (tx) => {
        await tx.run(`DROP TRIGGER raven_test_fault ON ${table}`);
        await tx.run('DROP FUNCTION raven_test_fault()');
      });
    },
  };
}

/** Injects the fault now and clears it after `ms`; the promise of its clearing. */
async function faultFor(fault: StorageFault, ms: number): Promise<{ cleared: Promise<void> }> {
  await fault.inject();
  return { cleared: new Promise((resolve) => setTimeout(resolve, ms)).then(() => fault.clear()) };
}

const env = relayAndReceiver();

test('an attempt whose record meets a storage fault is recorded once the storage is back, not sent again', { timeout: 60_000 }, async () => {
  const { t, receiver } = env;
  const hookId = (await createEndpoint(t, receiver.url, ['email.queued'])).id;
  const fault = storageFault(t, 'webhook_attempts');
  // Past busy_timeout on SQLite: the first write fails.
  const lastsMs = t.relay.services.db.dialect === 'sqlite' ? SQLITE_BUSY_TIMEOUT_MS + 1_000 : 1_000;
  let cleared: Promise<void> | undefined;
  receiver.answer = async () => {
    ({ cleared } = await faultFor(fault, lastsMs));
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

test('a delivery whose outcome meets a storage fault is recorded once the storage is back: sent, once', { timeout: 60_000 }, async (ctx) => {
  let fault: StorageFault | undefined;
  let lastsMs = 0;
  let cleared: Promise<void> | undefined;
  const upstream = await startFakeUpstream({
    async onData() {
      if (fault) ({ cleared } = await faultFor(fault, lastsMs));
      return 'accept' as const;
    },
  });
  const t = await startTestRelay({ flags: { upstream: upstream.url } });
  ctx.after(async () => {
    await t.stop();
    await upstream.close();
  });
  fault = storageFault(t, 'delivery_attempts');
  // On SQLite past two busy_timeouts and a second between them: what a single retry a second
  // later waited out, and what half a lease (15 s) of retries does not.
  lastsMs = t.relay.services.db.dialect === 'sqlite' ? 2 * SQLITE_BUSY_TIMEOUT_MS + 2_000 : 3_000;
  const sent = await t.send({ subject: 'Outcome recorded late' });
  assert.equal(sent.status, 202, sent.text);
  while (cleared === undefined) await sleep(10);
  fault = undefined;
  await cleared;
  const final = await t.waitForFinal(sent.body.id, { timeoutMs: 20_000 });
  assert.deepEqual(
    final.recipients.map((r: { status: string }) => r.status),
    ['sent'],
    `the upstream accepted it, so sent, not delivery_unknown: ${JSON.stringify(final)}`,
  );
  assert.equal(upstream.received.length, 1, 'sent once');
});
