// The SMTP sink as a server any SMTP client can use: capture, simulated outcomes, the size limit.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import nodemailer from 'nodemailer';
import { buildOutboundMessage } from '../../relay/delivery/mime.js';
import { createUpstreamProvider } from '../../relay/delivery/upstream.js';
import { listCapturedMessages, getCapturedMessage } from '../../relay/storage/captured.js';
import { startHarness, type Harness } from '../helpers/delivery-harness.js';
import { smtpConnect, smtpSend as send } from '../helpers/smtp-send.js';

const LIMIT = 64 * 1024;

const connect = (h: Harness) => smtpConnect(h.sink.host, h.sink.port);

describe('the SMTP sink', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ worker: false, sink: { maxMessageBytes: LIMIT } });
  });
  after(() => h.stop());

  test('any SMTP client may send to it; the message is captured with its envelope', async () => {
    const transport = nodemailer.createTransport({ host: h.sink.host, port: h.sink.port, ignoreTLS: true, auth: { user: 'any', pass: 'thing' } });
    try {
      const info = await transport.sendMail({
        from: 'App <app@elsewhere.test>',
        to: 'Someone <someone@elsewhere.test>',
        bcc: 'hidden@elsewhere.test',
        subject: 'Ünïcode subject',
        text: 'hello',
      });
      assert.deepEqual(info.accepted, ['someone@elsewhere.test', 'hidden@elsewhere.test']);
      const queueId = /queued as (msg_[0-9a-z]{26})/.exec(info.response)?.[1];
      assert.ok(queueId, info.response);
      const [listed] = await listCapturedMessages(h.services.db, { to: 'HIDDEN@elsewhere.test', limit: 10 });
      assert.equal(listed?.id, queueId);
      assert.deepEqual(listed.to, ['someone@elsewhere.test', 'hidden@elsewhere.test']);
      assert.equal(listed.from, 'app@elsewhere.test');
      assert.equal(listed.subject, 'Ünïcode subject');
      const stored = await getCapturedMessage(h.services.db, queueId);
      assert.equal(stored?.size, stored?.raw.length);
      assert.equal(stored?.email_id, null, 'not one of the relay\'s emails');
    } finally {
      transport.close();
    }
  });

  test('simulated outcomes are SMTP replies: 550 5.1.1, 554 5.7.1, 451 4.7.1 once', async () => {
    const conn = await connect(h);
    try {
      const info = await send(conn, 'app@elsewhere.test', ['ok@x.test', 'bounced+a@x.test', 'rejected@x.test', 'delayed@x.test'], 'Subject: hi\r\n\r\nbody\r\n');
      assert.deepEqual(info.accepted, ['ok@x.test']);
      const replies = Object.fromEntries(
        ((info as unknown as { rejectedErrors: Array<{ recipient: string; response: string }> }).rejectedErrors).map((e) => [e.recipient, e.response]),
      );
      assert.match(replies['bounced+a@x.test']!, /^550 5\.1\.1 /);
      assert.match(replies['rejected@x.test']!, /^554 5\.7\.1 /);
      assert.match(replies['delayed@x.test']!, /^451 4\.7\.1 /);
      // The same sender tries again: the delayed recipient is accepted now.
      const retry = await send(conn, 'app@elsewhere.test', ['delayed@x.test'], 'Subject: hi\r\n\r\nbody\r\n');
      assert.deepEqual(retry.accepted, ['delayed@x.test']);
    } finally {
      conn.quit();
    }
  });

  test('unknown: the connection is dropped after the message, without an answer', async () => {
    const conn = await connect(h);
    const before = (await listCapturedMessages(h.services.db, { to: 'unknown@x.test', limit: 10 })).length;
    await assert.rejects(send(conn, 'app@elsewhere.test', ['unknown@x.test'], 'Subject: hi\r\n\r\nbody\r\n'), (err: Error & { code?: string; responseCode?: number }) => {
      assert.equal(err.code, 'ECONNECTION');
      assert.equal(err.responseCode, undefined, 'no reply at all');
      return true;
    });
    assert.equal((await listCapturedMessages(h.services.db, { to: 'unknown@x.test', limit: 10 })).length, before + 1);
  });

  test('reports for the raven. MX and captured mail never share a transaction: 452 4.5.3', async () => {
    const conn = await connect(h);
    try {
      const report = `bounce+em_01jdq4zk5w9m2v3xg7h8tq1b6n@raven.${h.domain}`;
      const info = (await send(conn, 'someone@elsewhere.test', ['person@elsewhere.test', report], 'Subject: mixed\r\n\r\nhello\r\n')) as {
        accepted: string[];
        rejected: string[];
        rejectedErrors?: Array<{ responseCode?: number; response?: string }>;
      };
      assert.deepEqual(info.accepted, ['person@elsewhere.test']);
      assert.deepEqual(info.rejected, [report]);
      assert.equal(info.rejectedErrors?.[0]?.responseCode, 452);
      assert.match(info.rejectedErrors?.[0]?.response ?? '', /4\.5\.3/);
    } finally {
      conn.close();
    }
  });

  test('a message over the size limit is refused with 552 while streaming, and the session stays usable', async () => {
    const conn = await connect(h);
    try {
      const big = `Subject: big\r\n\r\n${'x'.repeat(76)}\r\n`.repeat(Math.ceil((LIMIT * 2) / 78));
      await assert.rejects(send(conn, 'app@elsewhere.test', ['big@x.test'], big), (err: Error & { responseCode?: number; response?: string }) => {
        assert.equal(err.responseCode, 552);
        assert.match(err.response ?? '', /^552 5\.3\.4 /);
        return true;
      });
      assert.equal((await listCapturedMessages(h.services.db, { to: 'big@x.test', limit: 10 })).length, 0, 'nothing kept');
      await new Promise<void>((resolve, reject) => conn.reset((err) => (err ? reject(err) : resolve())));
      const ok = await send(conn, 'app@elsewhere.test', ['small@x.test'], 'Subject: small\r\n\r\nfine\r\n');
      assert.deepEqual(ok.accepted, ['small@x.test']);
    } finally {
      conn.quit();
    }
  });

  test('an email over the sink limit fails with the 552 as a permanent refusal', async () => {
    h.startWorker();
    const id = await h.insertEmail({ text: 'y'.repeat(LIMIT * 2) });
    const email = await h.waitForTerminal(id);
    assert.equal(email.status, 'failed');
    assert.deepEqual((await h.events(id)).map((e) => [e.type, e.payload.reason]), [['email.failed', 'rejected']]);
    assert.equal((await h.captured(id)).length, 0);
  });

  test('an upstream SMTP provider maps each recipient the same way (here pointed at the sink)', async () => {
    const provider = createUpstreamProvider({ host: h.sink.host, port: h.sink.port, secure: false, requireTLS: false, pool: 2 }, h.services);
    try {
      const message = await buildOutboundMessage(
        {
          id: 'em_0000000000upstream00000000',
          from_address: 'app@up.test',
          to_json: '["a@up.test"]',
          cc_json: '[]',
          reply_to: null,
          subject: 's',
          text_body: 't',
          html_body: null,
          headers_json: '{}',
        },
        ['a@up.test', 'bounced@up.test', 'rejected@up.test', 'delayed+up@up.test'].map((address, position) => ({ address, position })),
        new Date(),
      );
      const result = await provider.deliver(message);
      assert.equal(provider.name, 'smtp');
      assert.deepEqual(
        result.recipients.map((r) => [r.address, r.outcome, r.smtpCode, r.enhancedCode]),
        [
          ['a@up.test', 'accepted', 250, '2.0.0'],
          ['bounced@up.test', 'bounced', 550, '5.1.1'],
          ['rejected@up.test', 'rejected', 554, '5.7.1'],
          ['delayed+up@up.test', 'deferred', 451, '4.7.1'],
        ],
      );
      assert.match(result.providerMessageId ?? '', /^msg_/);
      // A second message reuses the pooled session.
      const again = await provider.deliver({
        ...message,
        envelope: { ...message.envelope, to: ['delayed+up@up.test'], recipientSenders: message.envelope.recipientSenders.slice(3) },
      });
      assert.deepEqual(again.recipients.map((r) => r.outcome), ['accepted']);
    } finally {
      await provider.close();
    }
  });
});
