// Bounces and complaints coming back: the relay delivers through an upstream (a real SMTP server
// in this process, which accepts everything: acceptance is `sent`), then reports written after
// real Postfix, Exchange and feedback-loop ones arrive over SMTP at the relay's `raven.` MX, and
// become outcomes, timeline events, webhooks and suppressions.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js';
import { loadReport, reportAddressOf, returnPathOf } from '../helpers/report-fixtures.js';
import { smtpSendOnce, type SmtpSendError } from '../helpers/smtp-send.js';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';
import { startReceiver, type Receiver } from '../helpers/webhooks.js';

let upstream: FakeUpstream;
let t: TestRelay;
let receiver: Receiver;

before(async () => {
  upstream = await startFakeUpstream();
  t = await startTestRelay({ flags: { upstream: upstream.url, allowLocalWebhooks: true } });
  receiver = await startReceiver();
  const hook = await t.admin('POST', `/admin/v1/projects/${t.projectId}/webhooks`, {
    url: receiver.url,
    events: ['email.bounced', 'email.complained', 'email.delivery_delayed', 'email.delivered'],
  });
  assert.equal(hook.status, 201, hook.text);
});

after(async () => {
  await t.stop();
  await receiver.close();
  await upstream.close();
});

let counter = 0;
/** Sends an email through the relay and waits until the upstream took it (`sent`). */
async function sentEmail(recipients: string[] = [`rcpt${++counter}@${t.domain}`]): Promise<{ id: string; recipients: string[] }> {
  const res = await t.send({ to: recipients });
  assert.equal(res.status, 202, res.text);
  const detail = await t.waitForFinal(res.body.id);
  assert.equal(detail.status, 'sent');
  return { id: res.body.id, recipients };
}

const detailOf = async (id: string) => (await t.api('GET', `/v1/emails/${id}`)).body;

async function suppressions(): Promise<Array<{ email: string; reason: string }>> {
  const res = await t.admin('GET', `/admin/v1/workspaces/${t.workspaceId}/suppressions`);
  assert.equal(res.status, 200, res.text);
  return res.body.suppressions;
}

/** Mails a report from the null sender, the way MTAs send them, to the relay's listener. */
function mailReport(to: string, raw: Buffer) {
  return smtpSendOnce(t.relay.smtpHost, t.relay.smtpPort, '', [to], raw);
}

async function webhookFor(emailId: string, type: string) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const found = receiver.requests.map((r) => JSON.parse(r.raw.toString('utf8'))).find((b) => b.type === type && b.data.email_id === emailId);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no ${type} webhook for ${emailId}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('delivery status notifications', () => {
  test('a Postfix hard bounce: bounced, an event with the status, a webhook, a suppression; later sends are suppressed', async () => {
    const { id, recipients } = await sentEmail();
    const rcpt = recipients[0]!;
    const info = await mailReport(returnPathOf(id, t.domain), loadReport('postfix-hard-bounce.eml', { emailId: id, domain: t.domain, recipient: rcpt }));
    assert.match(info.response, /^250/);

    const detail = await detailOf(id);
    assert.equal(detail.status, 'bounced');
    assert.equal(detail.recipients[0].status, 'bounced');
    const bounced = detail.events.filter((e: any) => e.type === 'email.bounced');
    assert.equal(bounced.length, 1);
    assert.equal(bounced[0].payload.bounce_type, 'hard');
    assert.equal(bounced[0].payload.enhanced_status_code, '5.1.1');

    const hook = await webhookFor(id, 'email.bounced');
    assert.equal(hook.id, bounced[0].id, 'the webhook event is the timeline event');
    assert.equal(hook.data.recipient, rcpt);
    assert.equal(hook.data.bounce_type, 'hard');

    assert.deepEqual((await suppressions()).filter((s) => s.email === rcpt).map((s) => s.reason), ['hard_bounce']);
    const again = await t.send({ to: rcpt });
    assert.equal(again.status, 200, again.text);
    assert.deepEqual([again.body.status, again.body.reason], ['suppressed', 'hard_bounce']);
  });

  test('the same report twice changes nothing the second time', async () => {
    const { id, recipients } = await sentEmail();
    const raw = loadReport('postfix-hard-bounce.eml', { emailId: id, domain: t.domain, recipient: recipients[0]! });
    await mailReport(returnPathOf(id, t.domain), raw);
    await mailReport(returnPathOf(id, t.domain), raw);
    const detail = await detailOf(id);
    assert.equal(detail.events.filter((e: any) => e.type === 'email.bounced').length, 1);
  });

  test('an Exchange Online report (5.1.10) is a hard bounce; the id is found from the returned headers too', async () => {
    const { id, recipients } = await sentEmail();
    // Sent to the feedback address rather than the VERP one: the email is found from the report itself.
    await mailReport(reportAddressOf(t.domain), loadReport('exchange-online-ndr.eml', { emailId: id, domain: t.domain, recipient: recipients[0]! }));
    const detail = await detailOf(id);
    assert.equal(detail.recipients[0].status, 'bounced');
    assert.equal(detail.events.find((e: any) => e.type === 'email.bounced').payload.enhanced_status_code, '5.1.10');
    assert.ok((await suppressions()).some((s) => s.email === recipients[0] && s.reason === 'hard_bounce'));
  });

  test('a delay warning adds a delivery_delayed event and leaves the recipient sent, unsuppressed', async () => {
    const { id, recipients } = await sentEmail();
    await mailReport(returnPathOf(id, t.domain), loadReport('postfix-delayed.eml', { emailId: id, domain: t.domain, recipient: recipients[0]! }));
    const detail = await detailOf(id);
    assert.equal(detail.status, 'sent');
    assert.equal(detail.recipients[0].status, 'sent');
    const delayed = detail.events.filter((e: any) => e.type === 'email.delivery_delayed');
    assert.equal(delayed.length, 1);
    assert.equal(delayed[0].payload.enhanced_status_code, '4.4.1');
    await webhookFor(id, 'email.delivery_delayed');
    assert.ok(!(await suppressions()).some((s) => s.email === recipients[0]));
  });

  test('an expired message is a soft bounce: bounced, but not suppressed', async () => {
    const { id, recipients } = await sentEmail();
    await mailReport(returnPathOf(id, t.domain), loadReport('postfix-expired-soft-bounce.eml', { emailId: id, domain: t.domain, recipient: recipients[0]! }));
    const detail = await detailOf(id);
    assert.equal(detail.status, 'bounced');
    assert.equal(detail.events.find((e: any) => e.type === 'email.bounced').payload.bounce_type, 'soft');
    assert.ok(!(await suppressions()).some((s) => s.email === recipients[0]));
  });

  test('one report about two recipients: a full mailbox (soft) and a delivery; the email ends sent', async () => {
    const { id, recipients } = await sentEmail([`full${++counter}@${t.domain}`, `fine${counter}@${t.domain}`]);
    await mailReport(
      returnPathOf(id, t.domain),
      loadReport('postfix-two-recipients.eml', { emailId: id, domain: t.domain, recipient: recipients[0]!, recipient2: recipients[1]! }),
    );
    const detail = await detailOf(id);
    assert.deepEqual(
      detail.recipients.map((r: any) => r.status),
      ['bounced', 'delivered'],
    );
    assert.equal(detail.status, 'sent', 'mixed outcomes leave the email sent');
    assert.ok(!(await suppressions()).some((s) => recipients.includes(s.email)));
  });

  test('a bounce for a forwarded address, sent to a per-recipient VERP address, bounces that recipient', async () => {
    const { id, recipients } = await sentEmail([`first${++counter}@${t.domain}`, `second${counter}@${t.domain}`]);
    const verp = upstream.received.find((m) => m.to[0] === recipients[1])!.from;
    assert.equal(verp, `bounce+${id}.1@raven.${t.domain}`);
    // The report names only where the second recipient's mail was forwarded to.
    await mailReport(verp, loadReport('postfix-hard-bounce.eml', { emailId: id, domain: t.domain, recipient: 'forwarded@elsewhere.example' }));
    assert.deepEqual((await detailOf(id)).recipients.map((r: any) => r.status), ['sent', 'bounced']);
  });

  test('a report naming someone who was not a recipient changes nothing', async () => {
    const { id } = await sentEmail();
    const info = await mailReport(returnPathOf(id, t.domain), loadReport('postfix-hard-bounce.eml', { emailId: id, domain: t.domain, recipient: 'stranger@example.org' }));
    assert.match(info.response, /^250/);
    const detail = await detailOf(id);
    assert.equal(detail.status, 'sent');
    assert.ok(!(await suppressions()).some((s) => s.email === 'stranger@example.org'));
  });
});

describe('feedback reports (ARF)', () => {
  test('an abuse report: complained, a webhook, a complaint suppression; the email counts as delivered', async () => {
    const { id, recipients } = await sentEmail();
    const rcpt = recipients[0]!;
    await mailReport(reportAddressOf(t.domain), loadReport('yahoo-arf-abuse.eml', { emailId: id, domain: t.domain, recipient: rcpt }));
    const detail = await detailOf(id);
    assert.equal(detail.recipients[0].status, 'complained');
    // A complaint proves the message reached the mailbox (CONTRACT section 4: complained counts as delivered).
    assert.equal(detail.status, 'delivered');
    const hook = await webhookFor(id, 'email.complained');
    assert.equal(hook.data.recipient, rcpt);
    assert.equal(hook.data.feedback_type, 'abuse');
    assert.deepEqual((await suppressions()).filter((s) => s.email === rcpt).map((s) => s.reason), ['complaint']);
  });

  test('a redacted report is tied to the only recipient of the email it quotes', async () => {
    const { id, recipients } = await sentEmail();
    await mailReport(reportAddressOf(t.domain), loadReport('redacted-arf-abuse.eml', { emailId: id, domain: t.domain, recipient: recipients[0]! }));
    assert.equal((await detailOf(id)).recipients[0].status, 'complained');
  });

  test('a redacted report about a two-recipient email cannot name anyone: nobody is suppressed', async () => {
    const { id, recipients } = await sentEmail([`a${++counter}@${t.domain}`, `b${counter}@${t.domain}`]);
    await mailReport(reportAddressOf(t.domain), loadReport('redacted-arf-abuse.eml', { emailId: id, domain: t.domain, recipient: recipients[0]! }));
    assert.deepEqual((await detailOf(id)).recipients.map((r: any) => r.status), ['sent', 'sent']);
  });
});

describe('the report MX refuses everything else', () => {
  const refusal = async (promise: Promise<unknown>) => {
    const error = (await promise.then(
      () => assert.fail('expected a refusal'),
      (e: SmtpSendError) => e,
    )) as SmtpSendError;
    return error;
  };

  test('an auto-reply sent to the return path is refused with 550 5.7.1, and changes nothing', async () => {
    const { id, recipients } = await sentEmail();
    const error = await refusal(mailReport(returnPathOf(id, t.domain), loadReport('out-of-office.eml', { emailId: id, domain: t.domain, recipient: recipients[0]! })));
    assert.equal(error.responseCode, 550);
    assert.match(error.response ?? '', /5\.7\.1/);
    assert.equal((await detailOf(id)).status, 'sent');
    const metrics = await fetch(`${t.url}/metrics`).then((r) => r.text());
    assert.match(metrics, /^raven_reports_total\{kind="none",result="refused"\} [1-9]/m);
    assert.match(metrics, /^raven_reports_total\{kind="dsn",result="applied"\} [1-9]/m);
  });

  test('a raven. address of a domain the relay does not know is refused at RCPT', async () => {
    const error = await refusal(mailReport('bounce@raven.not-connected.test', loadReport('out-of-office.eml', { emailId: 'em_x', domain: 'x.test', recipient: 'a@b.test' })));
    assert.equal(error.responseCode, 550);
    assert.match(error.response ?? '', /5\.1\.2/);
  });

  test('with an upstream provider the listener is no open sink: other recipients are refused', async () => {
    const error = await refusal(smtpSendOnce(t.relay.smtpHost, t.relay.smtpPort, 'someone@example.org', ['user@example.org'], 'Subject: hi\r\n\r\nhello\r\n'));
    assert.equal(error.responseCode, 550);
    assert.match(error.response ?? '', /relaying denied/);
    const captured = await t.admin('GET', '/admin/v1/messages');
    assert.deepEqual(captured.body.messages, []);
  });
});
