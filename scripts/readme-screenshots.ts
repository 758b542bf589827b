// Makes the README's pictures (docs/inbox.png, docs/email.png, docs/checks.png): a relay with a
// few realistic captured messages, the inbox with its checks badges, one message and its Checks
// tab, in Chromium. `node --import tsx scripts/readme-screenshots.ts`
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchBrowser, newPage, signIn } from '../test/helpers/browser.js';
import { composeMessage } from '../test/helpers/mime.js';
import { smtpSendOnce } from '../test/helpers/smtp-send.js';
import { startTestRelay } from '../test/helpers/start-relay.js';

const docs = fileURLToPath(new URL('../docs/', import.meta.url));
// A public host name, as in production: the SPF record the relay gives its domains names it.
const t = await startTestRelay({ flags: { publicHostname: 'relay.acme.test' } });
const b = await launchBrowser();
try {
  const mail = [
    { from: 'Stripe <receipts@stripe.test>', to: 'ada@example.test', subject: 'Your receipt from Acme Inc. #2024-1187', text: 'Amount paid $49.00. Thanks for your business.' },
    { from: 'GitHub <noreply@github.test>', to: 'ada@example.test', subject: '[raven] Pull request #42 merged', text: 'Merged dashboard: a web inbox for the relay.' },
    { from: 'Linear <notifications@linear.test>', to: 'ada@example.test', subject: 'RAV-112 assigned to you', text: 'Search with from:, to:, subject: and is:unread terms.' },
    { from: 'Calendar <calendar@example.test>', to: 'ada@example.test', subject: 'Invitation: Design review @ Thu 10:00', text: 'You have been invited to a design review.', attach: true },
  ];
  for (const m of mail) {
    const raw = await composeMessage({ ...m, attachments: m.attach ? [{ filename: 'invite.ics', content: 'BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n' }] : [] });
    await smtpSendOnce(t.relay.smtpHost, t.relay.smtpPort, m.from.replace(/.*<|>/g, ''), [m.to], raw);
  }
  const welcome = await t.send({
    from: `Acme <hello@${t.domain}>`,
    to: `grace@${t.domain}`,
    subject: 'Welcome to Acme, Grace!',
    text: 'Welcome aboard. Confirm your address to get started.',
    html: `<div style="font-family:Helvetica,Arial,sans-serif;max-width:560px;margin:24px auto;color:#1f2937">
      <div style="background:#4f46e5;color:#fff;padding:28px 32px;border-radius:12px 12px 0 0"><h1 style="margin:0;font-size:26px">Welcome to Acme</h1></div>
      <div style="border:1px solid #e5e7eb;border-top:0;padding:28px 32px;border-radius:0 0 12px 12px">
      <p style="font-size:16px">Hi Grace,</p><p style="font-size:16px;line-height:1.5">Thanks for signing up. Confirm your email address to get started with your new workspace.</p>
      <p style="margin:28px 0"><a style="background:#4f46e5;color:#fff;padding:12px 22px;border-radius:8px;text-decoration:none;font-weight:600" href="https://acme.test/confirm">Confirm my address</a></p>
      <p style="color:#6b7280;font-size:13px">If you did not sign up, ignore this message.</p></div></div>`,
    tags: { category: 'welcome' },
  });
  await t.waitForFinal(welcome.body.id);
  const { page } = await newPage(b, 'light');
  await signIn(page, t);
  await page.locator('.message-row').nth(4).waitFor();
  // The list queued the checks badges; they arrive over the WebSocket.
  await page.locator('.message-row [data-checks]').nth(4).waitFor();
  await page.screenshot({ path: path.join(docs, 'inbox.png') });
  await page.locator('.message-row', { hasText: 'Welcome to Acme' }).click();
  const frame = await (await page.locator('iframe').elementHandle())!.contentFrame();
  await frame!.waitForLoadState('load');
  await page.screenshot({ path: path.join(docs, 'email.png') });
  await page.getByRole('tab', { name: 'Checks' }).click();
  await page.getByTestId('check-dkim').waitFor();
  await page.screenshot({ path: path.join(docs, 'checks.png') });
} finally {
  await b.close();
  await t.stop();
}
