// --upstream: the relay delivers through a real SMTP server (here one the test runs) instead of
// its sink; acceptance by the upstream is `sent`, never `delivered`.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';

let upstream: FakeUpstream;
let t: TestRelay;

before(async () => {
  upstream = await startFakeUpstream();
  t = await startTestRelay({ flags: { upstream: upstream.url } });
});

after(async () => {
  await t.stop();
  await upstream.close();
});

test('a message goes through the upstream and ends sent, with the upstream queue id', async () => {
  const res = await t.send({ subject: 'via upstream', bcc: [`hidden@${t.domain}`] });
  assert.equal(res.status, 202, res.text);
  const detail = await t.waitForFinal(res.body.id);
  assert.equal(detail.status, 'sent');
  assert.ok(detail.recipients.every((r: any) => r.status === 'sent'));
  // One transaction per recipient, each with its own VERP sender naming the email and the recipient.
  assert.deepEqual(
    upstream.received.map((m) => [m.from, m.to]),
    [
      [`bounce+${res.body.id}.0@raven.${t.domain}`, [`user@${t.domain}`]],
      [`bounce+${res.body.id}.1@raven.${t.domain}`, [`hidden@${t.domain}`]],
    ],
  );
  assert.equal(upstream.received[0]!.raw, upstream.received[1]!.raw, 'the same signed message to each');
  assert.ok(!/^bcc:/im.test(upstream.received[0]!.raw), 'no Bcc header');
  assert.match(upstream.received[0]!.raw, /^Subject: via upstream/m);
});

test('an upstream relay refuses local webhooks unless allowed', async () => {
  const res = await t.admin('POST', `/admin/v1/projects/${t.projectId}/webhooks`, { url: 'http://127.0.0.1:9/hook', events: ['*'] });
  assert.equal(res.status, 422, res.text);
});
