// The checks' summary badge of captured mail (issue 26): never computed at capture (a message no
// one listed or checked has none), computed lazily once a list shows it (GET /admin/v1/messages,
// GET /admin/v1/inbox), cached, refreshed by running the checks, and decided by the README's rules:
// pass for mail the relay signed and delivered, warnings for unsigned or HTML-only mail, fail for
// a signature broken after signing or a missing Date.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';
import { smtpSendOnce } from '../helpers/smtp-send.js';
import { ravenctl } from '../helpers/ravenctl.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { CaptureActivity } from '../../relay/inbox/capture-activity.js';
import { startCheckSummaries } from '../../relay/inbox/checks/summaries.js';

let t: TestRelay;
before(async () => {
  // A public host name, as in production: the SPF record of each domain names it.
  t = await startTestRelay({ flags: { publicHostname: 'relay.raven.test' } });
});
after(async () => {
  await t.stop();
});

const recipient = (tag: string) => `${tag}-${Math.random().toString(36).slice(2, 8)}@${t.domain}`;

/** Sends through the API, waits for the sink; returns the captured message's id, its recipient and raw source. */
async function deliver(fields: Record<string, unknown>): Promise<{ id: string; to: string; raw: string }> {
  const to = recipient('badge');
  const res = await t.send({ to, ...fields });
  assert.equal(res.status, 202, res.text);
  await t.waitForFinal(res.body.id);
  const waited = await t.admin('GET', `/admin/v1/messages/wait?to=${encodeURIComponent(to)}&timeout=30`);
  assert.equal(waited.status, 200, waited.text);
  return { id: waited.body.id, to, raw: (await t.admin('GET', `/admin/v1/messages/${waited.body.id}/raw`)).text };
}

/** Hands a raw message straight to the sink; returns its id and recipient. */
async function capture(lines: string[]): Promise<{ id: string; to: string }> {
  const to = recipient('raw');
  await smtpSendOnce(t.relay.smtpHost, t.relay.smtpPort, `sender@${t.domain}`, [to], lines.join('\r\n'));
  const waited = await t.admin('GET', `/admin/v1/messages/wait?to=${encodeURIComponent(to)}&timeout=30`);
  assert.equal(waited.status, 200, waited.text);
  return { id: waited.body.id, to };
}

const listed = async (to: string) => (await t.admin('GET', `/admin/v1/messages?to=${encodeURIComponent(to)}`)).body.messages[0];

/** Lists until the badge is there: the first list queued it, the relay computes it in the background. */
async function badgeOf(to: string): Promise<{ verdict: string; reasons: string[]; checked_at: string }> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const message = await listed(to);
    if (message.checks !== null) return message.checks;
    if (Date.now() > deadline) throw new Error(`no badge for ${to}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const HEADERS = (subject: string) => [`From: sender@${t.domain}`, `To: someone@${t.domain}`, `Subject: ${subject}`, 'Date: Wed, 25 Nov 2026 10:00:00 +0000', `Message-ID: <${Math.random()}@example.test>`];

test('capture never computes a badge: the first list shows none and queues it; then pass for mail the relay signed', async () => {
  const { id, to } = await deliver({ subject: 'Badge pass', text: 'Hello', html: '<p>Hello</p>' });
  const first = await listed(to);
  assert.equal(first.id, id);
  assert.equal(first.checks, null, 'nothing computed it at capture');
  const badge = await badgeOf(to);
  assert.deepEqual({ verdict: badge.verdict, reasons: badge.reasons }, { verdict: 'pass', reasons: [] });
  assert.match(badge.checked_at, /^\d{4}-\d\d-\d\dT/);
  // The inbox page carries the same badge.
  const page = await t.admin('GET', `/admin/v1/inbox?q=${encodeURIComponent('Badge pass')}`);
  assert.deepEqual(page.body.messages.find((m: { id: string }) => m.id === id).checks, badge);
  // And the checks' own summary agrees.
  const checks = await t.admin('GET', `/admin/v1/messages/${id}/checks?links=0`);
  assert.deepEqual(checks.body.summary, { verdict: 'pass', reasons: [] });
});

test('warnings: an unsigned message, and HTML without a text part, with each reason', async () => {
  const unsigned = await capture([...HEADERS('Unsigned'), '', 'Body', '']);
  const badge = await badgeOf(unsigned.to);
  assert.equal(badge.verdict, 'warnings');
  // Unsigned mail from a domain whose DMARC policy is none (the relay's recommended record): a warning, not a loss.
  assert.deepEqual(badge.reasons, ['no DKIM signature', `DMARC fail for ${t.domain} (policy none)`]);

  const htmlOnly = await capture([...HEADERS('HTML only'), 'Content-Type: text/html; charset=utf-8', '', '<p>Hello</p>', '']);
  const html = await badgeOf(htmlOnly.to);
  assert.equal(html.verdict, 'warnings');
  assert.equal(html.reasons.length, 3, JSON.stringify(html.reasons));
  assert.match(html.reasons.join('\n'), /^Text part: HTML only/m);
});

test('fail: a body altered after signing, and a message without Date; failures come before warnings', async () => {
  const { raw } = await deliver({ subject: 'Badge altered', text: 'Pay 10 EUR' });
  const altered = recipient('altered');
  await smtpSendOnce(t.relay.smtpHost, t.relay.smtpPort, `sender@${t.domain}`, [altered], raw.replace('Pay 10 EUR', 'Pay 99 EUR'));
  await t.admin('GET', `/admin/v1/messages/wait?to=${encodeURIComponent(altered)}&timeout=30`);
  const broken = await badgeOf(altered);
  assert.equal(broken.verdict, 'fail');
  assert.match(broken.reasons[0]!, new RegExp(`^DKIM (fail|neutral) for ${t.domain.replace(/\./g, '\\.')}: .*body hash`, 'i'));

  const undated = await capture([`From: sender@${t.domain}`, `To: someone@${t.domain}`, 'Subject: No date', 'Message-ID: <undated@example.test>', '', 'Body', '']);
  const badge = await badgeOf(undated.to);
  assert.equal(badge.verdict, 'fail');
  assert.deepEqual(badge.reasons, ['Date: missing: RFC 5322 requires a Date', 'no DKIM signature', `DMARC fail for ${t.domain} (policy none)`]);
});

test('running the checks stores the badge: a message never listed has it on its first list', async () => {
  const { id, to } = await capture([...HEADERS('Checked first'), '', 'Body', '']);
  const checks = await t.admin('GET', `/admin/v1/messages/${id}/checks?links=0`);
  assert.equal(checks.status, 200, checks.text);
  assert.equal(checks.body.summary.verdict, 'warnings');
  const first = await listed(to);
  assert.deepEqual(first.checks && { verdict: first.checks.verdict, reasons: first.checks.reasons }, checks.body.summary);
});

test('ravenctl relay messages list shows the CHECKS column; a deleted message is gone with its checks', async () => {
  const { id, to } = await capture([...HEADERS('Deleted badge'), '', 'Body', '']);
  await badgeOf(to);
  const env = { RAVEN_BASE_URL: t.directUrl, RAVEN_ADMIN_TOKEN: t.adminToken };
  const human = await ravenctl(['relay', 'messages', 'list', '--to', to], { env });
  assert.equal(human.code, 0, human.stderr);
  assert.match(human.stdout, /CHECKS/);
  assert.match(human.stdout, new RegExp(`${id}.* warnings`));
  const json = JSON.parse((await ravenctl(['relay', 'messages', 'list', '--to', to, '--json'], { env })).stdout);
  assert.equal(json.messages[0].checks.verdict, 'warnings');

  assert.equal((await t.admin('DELETE', `/admin/v1/messages/${id}`)).status, 204);
  assert.equal((await t.admin('GET', `/admin/v1/messages/${id}/checks?links=0`)).status, 404);
  assert.equal(await listed(to), undefined);
});

test('badges yield to capture: none is computed while a capture is in flight, then it is once the sink is quiet', async () => {
  // The relay's own parts with an activity gate this test holds, and no bound on the wait.
  const activity = new CaptureActivity({ quietMs: 5 });
  const summaries = startCheckSummaries(() => ({ ...t.relay.services, captureActivity: activity }), { busyPaceMs: Infinity });
  try {
    const { id } = await capture([...HEADERS('Yields to capture'), '', 'Body', '']);
    activity.begin();
    try {
      assert.equal((await summaries.attach([{ id }]))[0]!.checks, null, 'queued, not computed');
      await sleep(200);
      assert.equal((await summaries.attach([{ id }]))[0]!.checks, null, 'not computed while the sink is busy');
    } finally {
      activity.end();
    }
    await summaries.idle();
    assert.equal((await summaries.attach([{ id }]))[0]!.checks?.verdict, 'warnings');
  } finally {
    await summaries.stop();
  }
});
