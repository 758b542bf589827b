// SMTP submission (CONTRACT section 9) end to end: nodemailer as the application (pooled), the
// message admitted by the same rules as POST /v1/emails, delivered as submitted into the sink,
// and every refusal an SMTP reply that starts with the enhanced status code and the API's code.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import nodemailer from 'nodemailer';
import { createProjectWithKey, startTestRelay, type TestRelay } from '../helpers/start-relay.js';
import { openSubmission, plainMessage, submit, submitOnce } from '../helpers/submission.js';
import { createEndpoint, startReceiver } from '../helpers/webhooks.js';

let t: TestRelay;
before(async () => {
  t = await startTestRelay();
});
after(() => t.stop());

const transportFor = (key: string, options: Record<string, unknown> = {}) =>
  nodemailer.createTransport({
    host: '127.0.0.1',
    port: t.relay.submission.port,
    secure: false,
    auth: { user: 'raven', pass: key },
    ...options,
  });

/** The captured message the sink received for an email. */
async function capturedOf(emailId: string): Promise<{ id: string; raw: string }> {
  await t.waitForFinal(emailId);
  const list = await t.admin('GET', '/admin/v1/messages?limit=100');
  for (const m of list.body.messages) {
    if ((await t.admin('GET', `/admin/v1/messages/${m.id}`)).body.email_id === emailId) {
      return { id: m.id, raw: (await t.admin('GET', `/admin/v1/messages/${m.id}/raw`)).text };
    }
  }
  throw new Error(`no captured message for ${emailId}`);
}

const idOf = (reply: string) => /^250 2\.0\.0 (em_\w+) (queued|suppressed)$/.exec(reply)?.[1];

describe('SMTP submission with nodemailer', () => {
  test('a pooled nodemailer transport sends; the email is read like any other and delivered as submitted', async () => {
    const transport = transportFor(t.apiKey, { pool: true, maxConnections: 2 });
    try {
      const info = await transport.sendMail({
        from: `Acme <hello@${t.domain}>`,
        to: [`Ada <ada@${t.domain}>`],
        cc: [`cc@${t.domain}`],
        bcc: [`hidden@${t.domain}`],
        replyTo: `support@${t.domain}`,
        subject: 'Invoice ✓',
        text: 'Your invoice is attached.',
        attachments: [{ filename: 'invoice.txt', content: 'total: 42' }],
      });
      const reply = info.response;
      const id = idOf(reply);
      assert.ok(id, reply);

      const email = await t.api('GET', `/v1/emails/${id}`);
      assert.equal(email.status, 200, email.text);
      assert.equal(email.body.from, `Acme <hello@${t.domain}>`);
      assert.deepEqual(email.body.to, [`Ada <ada@${t.domain}>`]);
      assert.deepEqual(email.body.cc, [`cc@${t.domain}`]);
      assert.equal(email.body.subject, 'Invoice ✓');
      assert.equal(email.body.reply_to, `support@${t.domain}`);
      assert.deepEqual(
        email.body.recipients.map((r: { email: string; type: string }) => [r.email, r.type]),
        [[`ada@${t.domain}`, 'to'], [`cc@${t.domain}`, 'cc']],
        'BCC recipients are never listed',
      );
      assert.equal(email.body.events[0].type, 'email.queued');

      const final = await t.waitForFinal(id!);
      assert.equal(final.status, 'delivered');
      const captured = await capturedOf(id!);
      assert.match(captured.raw, /^DKIM-Signature: /m, 'DKIM-signed');
      assert.match(captured.raw, /filename=invoice\.txt/, 'the attachment travels as submitted');
      assert.match(captured.raw, new RegExp(`^Message-ID: ${info.messageId.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`, 'mi'), "the application's Message-ID is kept");
      assert.doesNotMatch(captured.raw, /hidden@/, 'no Bcc header leaves the relay');

      const log = await t.admin('GET', `/admin/v1/emails/${id}`);
      assert.equal(log.body.source, 'smtp', 'the email log says it came over SMTP');
      const api = await t.send();
      assert.equal((await t.admin('GET', `/admin/v1/emails/${api.body.id}`)).body.source, 'api');
    } finally {
      transport.close();
    }
  });

  test('the same logical mail over SMTP and over the API reads, notifies and arrives the same', async () => {
    const receiver = await startReceiver();
    const endpoint = await createEndpoint(t, receiver.url, ['*']);
    const fields = { from: `Acme <hello@${t.domain}>`, to: `ada@${t.domain}`, cc: `bob@${t.domain}`, subject: 'Same mail both ways', text: 'Hello Ada' };
    const transport = transportFor(t.apiKey);
    let smtpId: string;
    try {
      smtpId = idOf((await transport.sendMail(fields)).response)!;
    } finally {
      transport.close();
    }
    const api = await t.send(fields);
    assert.equal(api.status, 202, api.text);
    const [overSmtp, overApi] = [await t.waitForFinal(smtpId), await t.waitForFinal(api.body.id)];
    const comparable = (e: any) => ({
      from: e.from,
      to: e.to,
      cc: e.cc,
      subject: e.subject,
      status: e.status,
      test_mode: e.test_mode,
      recipients: e.recipients.map((r: any) => [r.email, r.type, r.status]),
      events: e.events.map((ev: any) => ev.type),
    });
    assert.deepEqual(comparable(overSmtp), comparable(overApi));
    const [a, b] = [await capturedOf(smtpId), await capturedOf(api.body.id)];
    const summary = async (id: string) => {
      const m = (await t.admin('GET', `/admin/v1/messages/${id}`)).body;
      return { to: m.to, subject: m.subject, text: m.text.trim(), from: m.headers.find(([n]: string[]) => n.toLowerCase() === 'from')[1] };
    };
    assert.deepEqual(await summary(a.id), await summary(b.id));

    // The webhooks: the same events with the same data, but for the email id.
    const hooksOf = (id: string) =>
      receiver.requests
        .map((r) => JSON.parse(r.raw.toString('utf8')))
        .filter((event) => event.data.email_id === id)
        .map((event) => ({ type: event.type, data: { ...event.data, email_id: undefined } }))
        .sort((x, y) => `${x.type}${x.data.recipient}`.localeCompare(`${y.type}${y.data.recipient}`));
    const deadline = Date.now() + 30_000;
    while (hooksOf(smtpId).length < overSmtp.events.length || hooksOf(api.body.id).length < overApi.events.length) {
      assert.ok(Date.now() < deadline, 'webhooks did not all arrive');
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.deepEqual(hooksOf(smtpId), hooksOf(api.body.id));
    assert.equal((await t.admin('DELETE', `/admin/v1/webhooks/${endpoint.id}`)).status, 204);
    await receiver.close();
  });

  test('an Idempotency-Key header answers the original email again; Date and Message-ID may change', async () => {
    const message = (date: string, id: string) =>
      plainMessage({ from: `hello@${t.domain}`, to: `ada@${t.domain}`, extra: [`Date: ${date}`, `Message-ID: <${id}@client.test>`, 'Idempotency-Key: smtp-once-1'] });
    const first = await submitOnce(t, t.apiKey, [`ada@${t.domain}`], message('Mon, 1 Jan 2024 00:00:00 +0000', 'a'));
    const again = await submitOnce(t, t.apiKey, [`ada@${t.domain}`], message('Tue, 2 Jan 2024 00:00:00 +0000', 'b'));
    assert.ok(idOf(first), first);
    assert.equal(again, first);
    const changed = await submitOnce(
      t,
      t.apiKey,
      [`ada@${t.domain}`],
      plainMessage({ from: `hello@${t.domain}`, to: `ada@${t.domain}`, subject: 'Other', extra: ['Idempotency-Key: smtp-once-1'] }),
    );
    assert.match(changed, /^554 5\.7\.0 idempotency_conflict: /);
  });
});

describe('SMTP submission: the envelope and the headers', () => {
  test('the envelope decides who receives (header-only addresses nothing, envelope-only BCC); any username; a Message-ID added when missing; an email:read key reads it', async () => {
    const smtp = await openSubmission(t);
    let reply: string;
    try {
      assert.match(await smtp.command('AUTH LOGIN'), /^334 /);
      assert.match(await smtp.command(Buffer.from('not-raven@anything').toString('base64')), /^334 /);
      assert.match(await smtp.command(Buffer.from(t.apiKey).toString('base64')), /^235 /, 'the username is not checked');
      const message = plainMessage({ from: `app@${t.domain}`, to: `Ada <ada@${t.domain}>, ghost@${t.domain}`, subject: 'Envelope decides', extra: [`Cc: cc@${t.domain}`] });
      reply = await submit(smtp, [`ada@${t.domain}`, `cc@${t.domain}`, `blind@${t.domain}`], message);
    } finally {
      smtp.destroy();
    }
    const id = idOf(reply);
    assert.ok(id, reply);
    const reader = await t.admin('POST', `/admin/v1/projects/${t.projectId}/keys`, { name: 'log reader', permission: 'email:read' });
    assert.equal(reader.status, 201, reader.text);
    const email = await t.api('GET', `/v1/emails/${id}`, { key: reader.body.key });
    assert.equal(email.status, 200, email.text);
    assert.deepEqual(email.body.to, [`Ada <ada@${t.domain}>`]);
    assert.deepEqual(email.body.cc, [`cc@${t.domain}`]);
    assert.deepEqual(
      email.body.recipients.map((r: { email: string; type: string }) => [r.email, r.type]),
      [[`ada@${t.domain}`, 'to'], [`cc@${t.domain}`, 'cc']],
      'the BCC recipient is not shown; the header-only address is no recipient',
    );
    const captured = await capturedOf(id!);
    const received: string[] = [];
    for (const m of (await t.admin('GET', '/admin/v1/messages?limit=100')).body.messages) {
      if ((await t.admin('GET', `/admin/v1/messages/${m.id}`)).body.email_id === id) received.push(...m.to);
    }
    assert.deepEqual(received.sort(), [`ada@${t.domain}`, `blind@${t.domain}`, `cc@${t.domain}`], 'the envelope recipients, ghost@ not among them');
    assert.match(captured.raw, new RegExp(`^Message-ID: <${id}@`, 'mi'), 'a Message-ID is added when the message has none');
  });
});

describe('SMTP submission refusals', () => {
  test('MAIL FROM before AUTH -> 530 5.7.0; a client that keeps trying is disconnected', async () => {
    const smtp = await openSubmission(t);
    try {
      for (let i = 0; i < 10; i++) assert.match(await smtp.command('MAIL FROM:<a@client.test>'), /^530 5\.7\.0 /);
      assert.match(await smtp.command('MAIL FROM:<a@client.test>'), /^421 4\.7\.0 /);
      await smtp.closed;
    } finally {
      smtp.destroy();
    }
  });

  test('a wrong, revoked or read-only key -> 535 5.7.8', async () => {
    const readOnly = await createProjectWithKey(t, { permission: 'email:read' });
    const revoked = await createProjectWithKey(t);
    assert.equal((await t.admin('DELETE', `/admin/v1/keys/${revoked.keyId}`)).status, 204);
    for (const key of ['rr_test_nope', readOnly.key, revoked.key, 'not-a-key']) {
      const smtp = await openSubmission(t);
      try {
        assert.match(await smtp.command(`AUTH PLAIN ${Buffer.from(`\0raven\0${key}`).toString('base64')}`), /^535 5\.7\.8 /);
      } finally {
        smtp.destroy();
      }
    }
  });

  test('AUTH LOGIN works as well as PLAIN', async () => {
    const smtp = await openSubmission(t);
    try {
      assert.match(await smtp.command('AUTH LOGIN'), /^334 /);
      assert.match(await smtp.command(Buffer.from('raven').toString('base64')), /^334 /);
      assert.match(await smtp.command(Buffer.from(t.apiKey).toString('base64')), /^235 /);
    } finally {
      smtp.destroy();
    }
  });

  test('message-level refusals answer the final dot with the API error code', async () => {
    const to = `ada@${t.domain}`;
    const cases: Array<[string, string, RegExp]> = [
      ['unverified From domain', plainMessage({ from: 'x@unverified.test', to }), /^550 5\.7\.1 domain_not_verified: /],
      ['no From header', `To: ${to}\r\nSubject: s\r\n\r\nbody`, /^550 5\.6\.0 validation_error: .*from/],
      ['two mailboxes in From', plainMessage({ from: `a@${t.domain}, b@${t.domain}`, to }), /^550 5\.6\.0 validation_error: .*exactly one mailbox/],
      ['a line break in the decoded subject', plainMessage({ from: `a@${t.domain}`, to, subject: '=?utf-8?Q?two=0Alines?=' }), /^550 5\.6\.0 validation_error: .*subject/],
      ['no subject', `From: a@${t.domain}\r\nTo: ${to}\r\n\r\nbody`, /^550 5\.6\.0 validation_error: .*subject/],
    ];
    for (const [name, message, expected] of cases) {
      assert.match(await submitOnce(t, t.apiKey, [to], message), expected, name);
    }
    // An envelope recipient admission refuses refuses the whole message at the final dot (CONTRACT
    // section 9), not that RCPT alone: else the message would go to the others.
    assert.match(
      await submitOnce(t, t.apiKey, [to, 'nobody@localhost'], plainMessage({ from: `a@${t.domain}`, to })),
      /^550 5\.6\.0 validation_error: .*RCPT TO\[1\]/,
    );
    // A development key and a recipient outside its project's domains.
    assert.match(await submitOnce(t, t.apiKey, ['someone@elsewhere.test'], plainMessage({ from: `a@${t.domain}`, to: 'someone@elsewhere.test' })), /^550 5\.7\.1 test_recipient_not_allowed: /);
  });

  test('reserved headers of the API do not apply to a submitted message; 8-bit and SMTPUTF8 content are accepted', async () => {
    const to = `ada@${t.domain}`;
    const reserved = plainMessage({ from: `a@${t.domain}`, to, extra: ['Return-Path: <x@client.test>', 'MIME-Version: 1.0', 'Content-Type: text/plain; charset=utf-8'] });
    assert.ok(idOf(await submitOnce(t, t.apiKey, [to], reserved)));
    const smtp = await openSubmission(t, t.apiKey);
    try {
      assert.match(await smtp.command(`MAIL FROM:<app@client.test> BODY=8BITMIME SMTPUTF8`), /^250/);
      assert.match(await smtp.command(`RCPT TO:<${to}>`), /^250/);
      assert.match(await smtp.command('DATA'), /^354/);
      const reply = await smtp.command(Buffer.from(`From: Zoë <zoe@${t.domain}>\r\nTo: ${to}\r\nSubject: Grüße ✓\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\nHällo\r\n.`, 'utf8'));
      const id = idOf(reply);
      assert.ok(id, reply);
      const email = await t.api('GET', `/v1/emails/${id}`);
      assert.equal(email.body.subject, 'Grüße ✓');
      assert.equal(email.body.from, `Zoë <zoe@${t.domain}>`);
    } finally {
      smtp.destroy();
    }
  });

  test('a suppressed recipient: accepted, stored as suppressed, not sent', async () => {
    const to = `gone@${t.domain}`;
    assert.equal((await t.admin('POST', `/admin/v1/workspaces/${t.workspaceId}/suppressions`, { email: to, reason: 'manual' })).status, 201);
    const reply = await submitOnce(t, t.apiKey, [to], plainMessage({ from: `a@${t.domain}`, to }));
    assert.match(reply, /^250 2\.0\.0 em_\w+ suppressed$/);
    const email = await t.api('GET', `/v1/emails/${idOf(reply)}`);
    assert.equal(email.body.status, 'suppressed');
  });

  test('the 51st RCPT TO -> 452 4.5.3', async () => {
    const smtp = await openSubmission(t, t.apiKey);
    try {
      assert.match(await smtp.command('MAIL FROM:<a@client.test>'), /^250/);
      for (let i = 0; i < 50; i++) assert.match(await smtp.command(`RCPT TO:<r${i}@${t.domain}>`), /^250/);
      assert.match(await smtp.command(`RCPT TO:<r50@${t.domain}>`), /^452 4\.5\.3 /);
    } finally {
      smtp.destroy();
    }
  });

  test('a declared SIZE over the limit at MAIL FROM -> 552 5.3.4 message_too_large, not the bare 552 of smtp-server', async () => {
    const smtp = await openSubmission(t, t.apiKey);
    try {
      assert.match(await smtp.command('EHLO client.test'), /^250[ -]SIZE 10485760$/m, 'SIZE 10485760 is advertised');
      const reply = await smtp.command(`MAIL FROM:<a@client.test> SIZE=${10485760 + 1}`);
      assert.equal(reply, '552 5.3.4 message_too_large: The message exceeds 10485760 bytes.');
      assert.match(await smtp.command('MAIL FROM:<a@client.test> SIZE=10485760'), /^250/, 'exactly the limit is accepted');
    } finally {
      smtp.destroy();
    }
  });

  test('a message over 10 MiB -> 552 5.3.4, refused while streaming, nothing stored', async () => {
    const before = (await t.api('GET', '/v1/emails?limit=100')).body.emails.length;
    const smtp = await openSubmission(t, t.apiKey);
    try {
      assert.match(await smtp.command(`MAIL FROM:<a@client.test> SIZE=${11 * 1024 * 1024}`), /^552 5\.3\.4 message_too_large: /, 'a declared size over the limit is refused at once');
      assert.match(await smtp.command('MAIL FROM:<a@client.test>'), /^250/);
      assert.match(await smtp.command(`RCPT TO:<ada@${t.domain}>`), /^250/);
      assert.match(await smtp.command('DATA'), /^354/);
      await smtp.write(`From: a@${t.domain}\r\nTo: ada@${t.domain}\r\nSubject: big\r\n\r\n`);
      const line = `${'x'.repeat(998)}\r\n`;
      const chunk = line.repeat(1024); // ~1 MiB
      for (let i = 0; i < 11; i++) await smtp.write(chunk);
      assert.match(await smtp.command('.'), /^552 5\.3\.4 message_too_large: /);
    } finally {
      smtp.destroy();
    }
    assert.equal((await t.api('GET', '/v1/emails?limit=100')).body.emails.length, before);
  });

  test('a client that disconnects in the middle of DATA leaves no email', async () => {
    const before = (await t.api('GET', '/v1/emails?limit=100')).body.emails.length;
    const smtp = await openSubmission(t, t.apiKey);
    assert.match(await smtp.command('MAIL FROM:<a@client.test>'), /^250/);
    assert.match(await smtp.command(`RCPT TO:<ada@${t.domain}>`), /^250/);
    assert.match(await smtp.command('DATA'), /^354/);
    await smtp.write(`From: a@${t.domain}\r\nTo: ada@${t.domain}\r\nSubject: cut\r\n\r\nhalf a mess`);
    smtp.destroy();
    await smtp.closed;
    // A later message on a new session is admitted: the cut one left nothing behind it.
    assert.ok(idOf(await submitOnce(t, t.apiKey, [`ada@${t.domain}`], plainMessage({ from: `a@${t.domain}`, to: `ada@${t.domain}` }))));
    assert.equal((await t.api('GET', '/v1/emails?limit=100')).body.emails.length, before + 1);
  });

  test('more than 10 failed AUTH from one address in a minute -> 421 4.7.0 and the connection closes; a minute later the right key authenticates', async () => {
    const relay = await startTestRelay({ flags: { testClock: true } });
    try {
      const smtp = await openSubmission(relay);
      const bad = Buffer.from('\0raven\0rr_test_wrong').toString('base64');
      for (let i = 0; i < 10; i++) assert.match(await smtp.command(`AUTH PLAIN ${bad}`), /^535 5\.7\.8 /);
      assert.match(await smtp.command(`AUTH PLAIN ${bad}`), /^421 4\.7\.0 /);
      await smtp.closed;
      // The budget is the address's: a new connection, even with the right key, is refused too.
      const again = await openSubmission(relay);
      assert.match(await again.command(`AUTH PLAIN ${Buffer.from(`\0raven\0${relay.apiKey}`).toString('base64')}`), /^421 4\.7\.0 /);
      again.destroy();
      await relay.admin('POST', '/admin/v1/clock/advance', { seconds: 61 });
      const later = await openSubmission(relay);
      assert.match(await later.command(`AUTH PLAIN ${Buffer.from(`\0raven\0${relay.apiKey}`).toString('base64')}`), /^235 /, 'the budget is per minute');
      later.destroy();
    } finally {
      await relay.stop();
    }
  });

  test('production_not_enabled: an rr_live_ key of a workspace not activated', async () => {
    const ws = await t.admin('POST', '/admin/v1/workspaces', { name: 'not activated' });
    const live = await createProjectWithKey(t, { workspaceId: ws.body.id, environment: 'production' });
    const reply = await submitOnce(t, live.key, [`ada@${live.domain}`], plainMessage({ from: `a@${live.domain}`, to: `ada@${live.domain}` }));
    assert.match(reply, /^550 5\.7\.1 production_not_enabled: /);
  });
});

describe('SMTP submission limits', () => {
  test('the rate limit (451 4.7.1 with the seconds) and the quota (452 4.3.1); the same Idempotency-Key then succeeds', async () => {
    const relay = await startTestRelay({
      limits: 'spec',
      flags: { testClock: true },
      overrides: (config) => {
        config.limits.testKeyPerMinute = 1;
        config.limits.testKeyMonthlyRecipients = 2;
      },
    });
    try {
      const to = `ada@${relay.domain}`;
      const message = (key: string) => plainMessage({ from: `a@${relay.domain}`, to, extra: [`Idempotency-Key: ${key}`] });
      assert.ok(idOf(await submitOnce(relay, relay.apiKey, [to], message('first'))));
      const limited = await submitOnce(relay, relay.apiKey, [to], message('second'));
      assert.match(limited, /^451 4\.7\.1 rate_limit_exceeded: .*\d+ seconds?/);
      // Over the HTTP API the window is the same one.
      assert.equal((await relay.send({}, { idempotencyKey: 'http' })).status, 429);
      await relay.admin('POST', '/admin/v1/clock/advance', { seconds: 61 });
      const retried = await submitOnce(relay, relay.apiKey, [to], message('second'));
      assert.ok(idOf(retried), retried);
      await relay.admin('POST', '/admin/v1/clock/advance', { seconds: 61 });
      assert.match(await submitOnce(relay, relay.apiKey, [to], message('third')), /^452 4\.3\.1 quota_exceeded: /);
    } finally {
      await relay.stop();
    }
  });

  test('the submitted message is erased by the body retention rule; the email log still says SMTP', async () => {
    const relay = await startTestRelay({ flags: { testClock: true } });
    try {
      const reply = await submitOnce(relay, relay.apiKey, [`ada@${relay.domain}`], plainMessage({ from: `a@${relay.domain}`, to: `ada@${relay.domain}` }));
      const id = idOf(reply)!;
      await relay.waitForFinal(id);
      const raw = () => relay.relay.services.db.get<{ raw: Buffer | null }>('SELECT raw FROM submissions WHERE email_id = ?', [id]);
      assert.ok((await raw())?.raw, 'kept while the email is within the retention');
      await relay.admin('POST', '/admin/v1/clock/advance', { seconds: 8 * 86_400 });
      const deadline = Date.now() + 30_000;
      while ((await raw())?.raw) {
        assert.ok(Date.now() < deadline, 'the submitted message was not erased');
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal((await relay.admin('GET', `/admin/v1/emails/${id}`)).body.source, 'smtp');
    } finally {
      await relay.stop();
    }
  });

  test('a session is closed at its deadline however busy it keeps (limits.smtpMaxSessionMs)', async () => {
    const relay = await startTestRelay({ overrides: (config) => (config.limits.smtpMaxSessionMs = 2_000) });
    try {
      const smtp = await openSubmission(relay);
      const guard = Date.now() + 30_000;
      while (!smtp.isClosed() && Date.now() < guard) {
        await smtp.command('NOOP').catch(() => undefined);
        await new Promise((r) => setTimeout(r, 200));
      }
      assert.ok(smtp.isClosed(), 'the session outlived its deadline');
    } finally {
      await relay.stop();
    }
  });

  test('/metrics counts submissions by result', async () => {
    const metrics = await fetch(`${t.directUrl}/metrics`).then((r) => r.text());
    assert.match(metrics, /^raven_submissions_total\{result="accepted"\} [1-9]\d*$/m);
    assert.match(metrics, /^raven_submissions_total\{result="replayed"\} [1-9]\d*$/m);
    assert.match(metrics, /^raven_submission_rejections_total\{code="domain_not_verified"\} [1-9]\d*$/m);
  });
});
