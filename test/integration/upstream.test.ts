// --upstream: the relay delivers through a real SMTP server (here one the test runs) instead of
// its sink; acceptance by the upstream is `sent`, never `delivered`.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';

const received: Array<{ from: string; to: string[]; raw: string }> = [];
let upstream: SMTPServer;
let t: TestRelay;

before(async () => {
  upstream = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback(null, 'Ok: queued as UPSTREAM123');
      });
    },
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', () => resolve()));
  const port = (upstream.server.address() as AddressInfo).port;
  t = await startTestRelay({ flags: { upstream: `smtp://127.0.0.1:${port}` } });
});

after(async () => {
  await t.stop();
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
});

test('a message goes through the upstream and ends sent, with the upstream queue id', async () => {
  const res = await t.send({ subject: 'via upstream', bcc: [`hidden@${t.domain}`] });
  assert.equal(res.status, 202, res.text);
  const detail = await t.waitForFinal(res.body.id);
  assert.equal(detail.status, 'sent');
  assert.ok(detail.recipients.every((r: any) => r.status === 'sent'));
  assert.equal(received.length, 1);
  assert.deepEqual(received[0]!.to.sort(), [`hidden@${t.domain}`, `user@${t.domain}`].sort());
  assert.ok(!/^bcc:/im.test(received[0]!.raw), 'no Bcc header');
  assert.match(received[0]!.raw, /^Subject: via upstream/m);
  assert.match(received[0]!.from, new RegExp(`@raven\\.${t.domain.replace('.', '\\.')}$`));
});

test('an upstream relay refuses local webhooks unless allowed', async () => {
  const res = await t.admin('POST', `/admin/v1/projects/${t.projectId}/webhooks`, { url: 'http://127.0.0.1:9/hook', events: ['*'] });
  assert.equal(res.status, 422, res.text);
});
