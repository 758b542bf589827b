// The worker's sessions to the relay's own sink stay within the sink's client limit
// (limits.smtpMaxClients): a delivery concurrency configured above it made the sink refuse the
// sessions past the limit (421), so their emails waited for a retry instead of being delivered.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';

let t: TestRelay;

before(async () => {
  t = await startTestRelay({
    overrides: (config) => {
      config.delivery.concurrency = 12;
      config.limits.smtpMaxClients = 3;
    },
  });
});

after(() => t.stop());

test('a delivery concurrency above the sink client limit: every email delivered at its first attempt, none refused 421', async () => {
  const sent = await Promise.all(Array.from({ length: 12 }, (_, i) => t.send({ to: `user${i}@${t.domain}` })));
  for (const s of sent) assert.equal(s.status, 202, s.text);
  for (const s of sent) {
    const detail = await t.waitForFinal(s.body.id);
    const attempts = await t.admin('GET', `/admin/v1/emails/${s.body.id}/attempts`);
    assert.equal(attempts.status, 200, attempts.text);
    assert.deepEqual(
      attempts.body.attempts.map((a: { outcome: string; reply: string }) => `${a.outcome}: ${a.reply.slice(0, 3)}`),
      ['delivered: 250'],
      `${s.body.id}: ${JSON.stringify(attempts.body.attempts.map((a: { reply: string }) => a.reply))}`,
    );
    assert.equal(detail.status, 'delivered');
  }
});
