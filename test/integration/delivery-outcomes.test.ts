// Delivery end to end below the HTTP layer: the worker, the sink provider and the SMTP sink over
// real SMTP on loopback, on a real SQLite file, with the simulated outcomes of CONTRACT section 6.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { simpleParser } from 'mailparser';
import { DELIVERY_RETRY_BACKOFF_SECONDS } from '../../relay/queue/backoff.js';
import { startHarness, type Harness } from '../helpers/delivery-harness.js';

describe('delivery through the SMTP sink', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.stop());

  test('a message travels queued -> delivered, built as the contract says', async () => {
    const d = h.domain;
    const id = await h.insertEmail({
      from: `Ravën Team <team@${d}>`,
      to: [`Ada <ada@${d}>`, `bob@${d}`],
      cc: [`carol@${d}`],
      bcc: [`secret-bcc@${d}`],
      replyTo: `replies@${d}`,
      subject: 'Grüße aus Köln ✓ — a subject long enough to need folding across several encoded words',
      text: 'Plain body ✓',
      html: '<p>HTML body ✓</p>',
      headers: { 'X-Campaign': 'spring-2026', 'List-Unsubscribe': '<mailto:unsubscribe@example.test>' },
    });
    const email = await h.waitForTerminal(id);
    assert.equal(email.status, 'delivered');
    const recipients = await h.recipients(id);
    assert.deepEqual(
      recipients.map((r) => [r.address, r.type, r.status, r.attempts]),
      [
        ['ada@example.test', 'to', 'delivered', 1],
        ['bob@example.test', 'to', 'delivered', 1],
        ['carol@example.test', 'cc', 'delivered', 1],
        ['secret-bcc@example.test', 'bcc', 'delivered', 1],
      ],
    );
    assert.equal((await h.job(id)).state, 'done');

    const events = await h.events(id);
    assert.deepEqual(
      events.map((e) => [e.type, e.recipient]),
      recipients.flatMap((r) => [
        ['email.sent', r.address],
        ['email.delivered', r.address],
      ]),
    );
    // The timeline payload never names the BCC recipient (the webhook body does).
    for (const e of events.filter((e) => e.recipient === 'secret-bcc@example.test')) assert.equal(e.payload.recipient, undefined);

    const [captured, ...more] = await h.captured(id);
    assert.equal(more.length, 0, 'one SMTP transaction for all recipients');
    assert.ok(captured);
    assert.equal(email.provider_message_id, captured.id, 'providerMessageId is the queue id the sink answered with');
    assert.deepEqual(JSON.parse(captured.envelope_to_json), ['ada@example.test', 'bob@example.test', 'carol@example.test', 'secret-bcc@example.test']);

    const raw = captured.raw.toString('utf8');
    const head = raw.slice(0, raw.indexOf('\r\n\r\n'));
    assert.doesNotMatch(head, /^bcc:/im, 'no Bcc header');
    assert.doesNotMatch(raw, /secret-bcc/, 'the BCC address appears nowhere in the message');
    assert.match(head, /^Subject: =\?UTF-8\?[QB]\?/m, 'non-ASCII subject as RFC 2047 encoded words');
    assert.match(head, /^From: =\?UTF-8\?[QB]\?.*\?= <team@example\.test>$/m);
    assert.match(head, /^Message-ID: <em_[0-9a-z]{26}@example\.test>$/m);
    assert.ok(head.includes(`Message-ID: <${id}@example.test>`));
    assert.match(head, /^Content-Type: multipart\/alternative;/m);
    assert.match(head, /^X-Campaign: spring-2026$/m);
    assert.match(head, /^List-Unsubscribe: <mailto:unsubscribe@example\.test>$/m);
    assert.match(head, /^Reply-To: replies@example\.test$/m);
    assert.match(head, /^Date: /m);
    for (const line of raw.split('\r\n')) assert.ok(Buffer.byteLength(line) <= 998, 'lines stay within RFC 5322 limits');

    const parsed = await simpleParser(captured.raw);
    assert.equal(parsed.subject, 'Grüße aus Köln ✓ — a subject long enough to need folding across several encoded words');
    assert.equal(parsed.text?.trim(), 'Plain body ✓');
    assert.equal(typeof parsed.html === 'string' && parsed.html.trim(), '<p>HTML body ✓</p>');
    const to = parsed.to && !Array.isArray(parsed.to) ? parsed.to.value.map((a) => a.address) : [];
    assert.deepEqual(to, ['ada@example.test', 'bob@example.test']);

    const sender = await h.services.db.get<{ envelope_from: string }>('SELECT envelope_from FROM captured_messages WHERE id = ?', [captured.id]);
    assert.equal(sender?.envelope_from, `bounce+${id}@raven.example.test`, 'VERP sender on the custom MAIL FROM subdomain');
  });

  test('bounced: hard bounce, workspace suppression in the same transaction', async () => {
    const id = await h.insertEmail({ to: [`bounced+1@${h.domain}`] });
    const email = await h.waitForTerminal(id);
    assert.equal(email.status, 'bounced');
    assert.equal(email.provider_message_id, null, 'nothing was accepted');
    assert.deepEqual((await h.recipients(id)).map((r) => r.status), ['bounced']);
    const events = await h.events(id);
    assert.deepEqual(events.map((e) => e.type), ['email.bounced']);
    assert.equal(events[0]!.payload.bounce_type, 'hard');
    assert.equal(events[0]!.payload.enhanced_status_code, '5.1.1', 'the RFC 3463 status, not the reply');
    assert.doesNotMatch(JSON.stringify(events), /550|mailbox/, 'no raw SMTP diagnostics in payloads');
    const suppression = await h.services.db.get<{ reason: string }>('SELECT reason FROM suppressions WHERE address_lc = ?', [`bounced+1@${h.domain}`]);
    assert.equal(suppression?.reason, 'hard_bounce');
    assert.equal((await h.captured(id)).length, 0);
  });

  test('rejected: failed, no suppression', async () => {
    const id = await h.insertEmail({ to: [`rejected@${h.domain}`] });
    const email = await h.waitForTerminal(id);
    assert.equal(email.status, 'failed');
    assert.deepEqual((await h.recipients(id)).map((r) => r.status), ['failed']);
    assert.deepEqual((await h.events(id)).map((e) => e.type), ['email.failed']);
    assert.equal(await h.services.db.get('SELECT 1 FROM suppressions WHERE address_lc = ?', [`rejected@${h.domain}`]), undefined);
  });

  test('complained: delivered, then a complaint and a suppression; the email stays delivered', async () => {
    const id = await h.insertEmail({ to: [`complained+x@${h.domain}`] });
    await h.waitForTerminal(id);
    const recipients = await h.waitFor('the complaint', async () => {
      const rs = await h.recipients(id);
      return rs[0]!.status === 'complained' ? rs : undefined;
    });
    assert.equal(recipients.length, 1);
    assert.equal((await h.email(id)).status, 'delivered');
    assert.deepEqual((await h.events(id)).map((e) => e.type), ['email.sent', 'email.delivered', 'email.complained']);
    const suppression = await h.services.db.get<{ reason: string }>('SELECT reason FROM suppressions WHERE address_lc = ?', [`complained+x@${h.domain}`]);
    assert.equal(suppression?.reason, 'complaint');
  });

  test('unknown: connection dropped after DATA -> delivery_unknown, never resent', async () => {
    const id = await h.insertEmail({ to: [`unknown@${h.domain}`] });
    const email = await h.waitForTerminal(id);
    assert.equal(email.status, 'delivery_unknown');
    assert.deepEqual((await h.recipients(id)).map((r) => r.status), ['delivery_unknown']);
    assert.deepEqual((await h.events(id)).map((e) => e.type), ['email.delivery_unknown']);
    const job = await h.job(id);
    assert.equal(job.state, 'done');
    assert.equal((await h.captured(id)).length, 1, 'the message did reach the receiving server');
    // However far time moves, it is not sent again: not claimed by the time a later email is delivered.
    h.clock.advance(2 * 86_400);
    await h.passBarrier();
    assert.deepEqual(await h.job(id), job, 'the job was claimed again');
    assert.equal((await h.captured(id)).length, 1);
    assert.deepEqual((await h.recipients(id)).map((r) => [r.status, r.attempts]), [['delivery_unknown', 1]]);
  });

  test('mixed recipients are mapped one by one; the email ends sent', async () => {
    const d = h.domain;
    const id = await h.insertEmail({
      to: [`ok@${d}`, `bounced@${d}`],
      cc: [`rejected+cc@${d}`],
      bcc: [`delayed+mixed@${d}`],
    });
    await h.waitFor('the first attempt', async () => ((await h.job(id)).attempts === 1 ? true : undefined));
    assert.deepEqual(
      (await h.recipients(id)).map((r) => r.status),
      ['delivered', 'bounced', 'failed', 'delivery_delayed'],
    );
    let email = await h.email(id);
    assert.equal(email.status, 'sent', 'accepted by the server, one recipient still pending');
    assert.equal(email.terminal_at, null);
    const job = await h.job(id);
    assert.equal(job.state, 'ready');
    assert.equal(Date.parse(job.run_at) - Date.parse(email.updated_at), DELIVERY_RETRY_BACKOFF_SECONDS[0]! * 1000);

    h.clock.advance(DELIVERY_RETRY_BACKOFF_SECONDS[0]! + 1);
    email = await h.waitForTerminal(id);
    assert.equal(email.status, 'sent');
    assert.deepEqual(
      (await h.recipients(id)).map((r) => [r.status, r.attempts]),
      [
        ['delivered', 1],
        ['bounced', 1],
        ['failed', 1],
        ['delivered', 2],
      ],
    );
    const captured = await h.captured(id);
    assert.deepEqual(
      captured.map((c) => JSON.parse(c.envelope_to_json)),
      [[`ok@${d}`], [`delayed+mixed@${d}`]],
      'the retry only goes to the deferred recipient',
    );
    assert.deepEqual(
      (await h.events(id)).map((e) => `${e.type} ${e.recipient}`),
      [
        `email.sent ok@${d}`,
        `email.delivered ok@${d}`,
        `email.bounced bounced@${d}`,
        `email.failed rejected+cc@${d}`,
        `email.delivery_delayed delayed+mixed@${d}`,
        `email.sent delayed+mixed@${d}`,
        `email.delivered delayed+mixed@${d}`,
      ],
    );
  });

  test('delayed: deferred with 451, retried when the clock reaches the backoff, then delivered', async () => {
    const id = await h.insertEmail({ to: [`delayed@${h.domain}`] });
    await h.waitFor('the first attempt', async () => ((await h.job(id)).attempts === 1 ? true : undefined));
    assert.deepEqual((await h.recipients(id)).map((r) => r.status), ['delivery_delayed']);
    assert.equal((await h.email(id)).status, 'queued');
    const delayed = (await h.events(id)).find((e) => e.type === 'email.delivery_delayed');
    assert.equal(delayed?.payload.attempt, 1);

    h.clock.advance(DELIVERY_RETRY_BACKOFF_SECONDS[0]! - 5);
    await h.passBarrier();
    const waiting = await h.job(id);
    assert.deepEqual([waiting.state, waiting.attempts], ['ready', 1], 'not due yet');

    h.clock.advance(10);
    const email = await h.waitForTerminal(id);
    assert.equal(email.status, 'delivered');
    assert.deepEqual((await h.events(id)).map((e) => e.type), ['email.delivery_delayed', 'email.sent', 'email.delivered']);
    assert.equal((await h.captured(id)).length, 1);
  });

  test('unknown beside a bounce: RCPT answers still count per recipient', async () => {
    const id = await h.insertEmail({ to: [`unknown+2@${h.domain}`, `bounced+2@${h.domain}`] });
    const email = await h.waitForTerminal(id);
    assert.deepEqual((await h.recipients(id)).map((r) => r.status), ['delivery_unknown', 'bounced']);
    assert.equal(email.status, 'sent', 'mixed outcomes');
  });

  test('unknown beside a plain recipient: the sink drops only the unknown one, the other is delivered', async () => {
    const id = await h.insertEmail({ to: [`plain@${h.domain}`, `unknown+3@${h.domain}`] });
    const email = await h.waitForTerminal(id);
    assert.deepEqual((await h.recipients(id)).map((r) => r.status), ['delivered', 'delivery_unknown']);
    assert.equal(email.status, 'sent', 'mixed outcomes');
  });
});

describe('the worker', () => {
  test('start-up recovery: a dispatch that had begun becomes delivery_unknown; a ready job is delivered', async () => {
    const h = await startHarness({ worker: false });
    try {
      const begun = await h.insertEmail({ to: [`a@${h.domain}`, `b@${h.domain}`], jobState: 'running' });
      const ready = await h.insertEmail({ to: [`c@${h.domain}`] });
      h.startWorker();
      const a = await h.waitForTerminal(begun);
      assert.equal(a.status, 'delivery_unknown');
      assert.deepEqual((await h.recipients(begun)).map((r) => r.status), ['delivery_unknown', 'delivery_unknown']);
      assert.deepEqual((await h.events(begun)).map((e) => e.type), ['email.delivery_unknown', 'email.delivery_unknown']);
      assert.equal((await h.job(begun)).state, 'dead');
      assert.equal((await h.captured(begun)).length, 0, 'never resent');
      assert.equal((await h.waitForTerminal(ready)).status, 'delivered');
      assert.equal(h.services.health.worker, true);
    } finally {
      await h.stop();
    }
    assert.equal(h.services.health.worker, false);
  });

  test('transient failures are retried along the backoff table, then the recipient fails', async () => {
    // A server that answers every connection with 421: a temporary failure before the message.
    const { createServer } = await import('node:net');
    const busy = createServer((socket) => socket.end('421 4.3.2 Service not available, closing channel\r\n'));
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const address = busy.address();
    assert.ok(address && typeof address === 'object');
    const h = await startHarness({ target: { host: '127.0.0.1', port: address.port } });
    try {
      const id = await h.insertEmail({ to: [`x@${h.domain}`] });
      for (const [i, seconds] of DELIVERY_RETRY_BACKOFF_SECONDS.entries()) {
        await h.waitFor(`attempt ${i + 1}`, async () => ((await h.job(id)).attempts === i + 1 ? true : undefined));
        assert.deepEqual((await h.recipients(id)).map((r) => r.status), ['delivery_delayed']);
        h.clock.advance(seconds);
      }
      const email = await h.waitForTerminal(id);
      assert.equal(email.status, 'failed');
      const job = await h.job(id);
      assert.equal(job.state, 'dead');
      assert.equal(job.attempts, DELIVERY_RETRY_BACKOFF_SECONDS.length + 1);
      const types = (await h.events(id)).map((e) => e.type);
      assert.deepEqual(types, [...DELIVERY_RETRY_BACKOFF_SECONDS.map(() => 'email.delivery_delayed'), 'email.failed']);
      assert.equal((await h.events(id)).at(-1)!.payload.reason, 'retries_exhausted');
    } finally {
      await h.stop();
      busy.close();
    }
  });

  test('maintenance erases bodies of emails terminal for longer than the retention and expired idempotency keys', async () => {
    const h = await startHarness();
    try {
      const id = await h.insertEmail({ text: 'to be erased', html: '<p>erased</p>' });
      await h.waitForTerminal(id);
      const now = h.clock.iso();
      await h.services.db.write((tx) =>
        tx.run(
          `INSERT INTO idempotency_keys (project_id, key, body_hash, email_id, status_code, response_json, created_at, expires_at)
           SELECT project_id, 'k1', 'h', id, 202, '{}', ?, ? FROM emails WHERE id = ?`,
          [now, new Date(h.clock.nowMs() + 3_600_000).toISOString(), id],
        ),
      );
      h.clock.advance(6 * 86_400);
      // k1 (expired by now) gone shows maintenance ran at the new time: it erases bodies in the same transaction.
      await h.waitFor('k1 to be removed', async () => (await h.services.db.get("SELECT 1 FROM idempotency_keys WHERE key = 'k1'")) === undefined);
      assert.equal((await h.email(id)).text_body, 'to be erased', 'kept within the retention');
      h.clock.advance(86_400 + 60);
      const email = await h.waitFor('bodies erased', async () => {
        const row = await h.email(id);
        return row.body_erased_at ? row : undefined;
      });
      assert.equal(email.text_body, null);
      assert.equal(email.html_body, null);
      assert.notEqual(email.bcc_json, null);
      assert.equal(await h.services.db.get("SELECT 1 FROM idempotency_keys WHERE key = 'k1'"), undefined);
    } finally {
      await h.stop();
    }
  });
});
