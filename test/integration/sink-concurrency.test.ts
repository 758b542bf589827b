// Delivery into the relay's own sink at the sink's client limit itself (delivery concurrency =
// limits.smtpMaxClients): the sessions the delivery threads hold toward the sink, open, idle or
// closing, never outnumber the limit, so the sink never refuses one with 421 and no email waits
// 30 s for a retry. Several waves, so sessions go idle on one thread and are wanted on another, and
// a bounced recipient among them, so sessions are reset between transactions.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';

const CLIENT_LIMIT = 3;
const WAVES = 8;
const PER_WAVE = 9;

let t: TestRelay;

before(async () => {
  t = await startTestRelay({
    overrides: (config) => {
      config.delivery.concurrency = CLIENT_LIMIT;
      config.limits.smtpMaxClients = CLIENT_LIMIT;
    },
  });
});

after(() => t.stop());

test('delivery concurrency at the sink client limit: every email answered at its first attempt, none refused 421', async () => {
  for (let wave = 0; wave < WAVES; wave++) {
    const to = Array.from({ length: PER_WAVE }, (_, i) => (i % 3 === 2 ? `bounced+${wave}.${i}@${t.domain}` : `user${wave}.${i}@${t.domain}`));
    const sent = await Promise.all(to.map((address) => t.send({ to: address })));
    for (const s of sent) assert.equal(s.status, 202, s.text);
    for (const [i, s] of sent.entries()) {
      await t.waitForFinal(s.body.id);
      const attempts = await t.admin('GET', `/admin/v1/emails/${s.body.id}/attempts`);
      assert.equal(attempts.status, 200, attempts.text);
      const replies = attempts.body.attempts.map((a: { outcome: string; reply: string | null }) => `${a.outcome}: ${a.reply}`);
      const expected = to[i]!.startsWith('bounced') ? 'bounced: 550' : 'delivered: 250';
      assert.deepEqual(
        replies.map((r: string) => r.slice(0, expected.length)),
        [expected],
        `wave ${wave}, ${to[i]}: ${JSON.stringify(replies)}`,
      );
    }
  }
});
