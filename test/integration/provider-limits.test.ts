// The provider's daily allowance: the worker queues rather than fails, and sends the next UTC day.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';

let t: TestRelay;
before(async () => {
  t = await startTestRelay({
    flags: { testClock: true },
    overrides: (c) => {
      c.delivery.dailyRecipients = 3;
    },
  });
});
after(async () => {
  await t.stop();
});

test('a message over the daily allowance waits for the next UTC day, then is delivered', async () => {
  const first = await t.send({ to: [`a@${t.domain}`, `b@${t.domain}`] });
  assert.equal(first.status, 202);
  assert.equal((await t.waitForFinal(first.body.id)).status, 'delivered');

  const second = await t.send({ to: [`c@${t.domain}`, `d@${t.domain}`] });
  assert.equal(second.status, 202);
  const clock = await t.admin('GET', '/admin/v1/clock');
  const now = new Date(clock.body.now);
  const tomorrow = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  const job = await putBack(second.body.id);
  assert.deepEqual([job.attempts, job.run_at], [0, new Date(tomorrow).toISOString()], 'put back for the next UTC day, not attempted');
  const waiting = await t.api('GET', `/v1/emails/${second.body.id}`);
  assert.equal(waiting.body.status, 'queued', 'held back, not failed');
  assert.ok(waiting.body.recipients.every((r: any) => r.status === 'queued'));

  await t.admin('POST', '/admin/v1/clock/advance', { seconds: Math.ceil((tomorrow - now.getTime()) / 1000) + 1 });
  assert.equal((await t.waitForFinal(second.body.id)).status, 'delivered');
});

/** Waits until the worker has looked at the email's job and put it back for later. */
async function putBack(emailId: string): Promise<{ attempts: number; run_at: string }> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const job = await t.relay.services.db.get<{ state: string; attempts: number; run_at: string; created_at: string }>(
      'SELECT state, attempts, run_at, created_at FROM jobs WHERE email_id = ?',
      [emailId],
    );
    if (job?.state === 'ready' && job.run_at > job.created_at) return job;
    if (job?.state === 'done' || job?.state === 'dead') throw new Error(`the job of ${emailId} was not held back: ${JSON.stringify(job)}`);
    if (Date.now() > deadline) throw new Error(`the job of ${emailId} was not put back: ${JSON.stringify(job)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
