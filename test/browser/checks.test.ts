// The Checks tab in Chromium: a message the relay delivered shows DKIM pass for its domain, and
// its HTML's unsupported features, as text.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { launchBrowser, newPage, screenshot, signIn, type TestBrowser } from '../helpers/browser.js';
import { smtpSendOnce } from '../helpers/smtp-send.js';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';

describe('dashboard checks tab', () => {
  let t: TestRelay;
  let b: TestBrowser;
  before(async () => {
    // A public host name, as in production: with `localhost` the SPF record it gives is a permerror, a warning.
    [t, b] = await Promise.all([startTestRelay({ flags: { publicHostname: 'relay.raven.test' } }), launchBrowser()]);
  });
  after(async () => {
    await b?.close();
    await t?.stop();
  });

  it('shows DKIM pass for the relay-signed message and flags an unsupported CSS feature', async () => {
    const sent = await t.send({ subject: 'Checks tab', text: 'Hi', html: '<div style="display:flex"><b>&lt;script&gt;</b></div>' });
    assert.equal(sent.status, 202, sent.text);
    await t.waitForFinal(sent.body.id);
    const { context, page } = await newPage(b);
    await signIn(page, t);
    // The inbox list shows the message's badge once the relay computed it (the list queued it;
    // the WebSocket brings it): the relay signed and delivered it, so it passes.
    const row = page.locator('.message-row').filter({ hasText: 'Checks tab' });
    await row.locator('[data-checks="pass"]').waitFor();
    assert.equal(await row.locator('[data-checks]').innerText(), 'pass');
    await row.click();
    await page.getByTestId('subject').filter({ hasText: 'Checks tab' }).waitFor();
    await page.getByRole('tab', { name: 'Checks' }).click();
    const dkim = page.getByTestId('check-dkim');
    await dkim.waitFor();
    assert.match(await dkim.innerText(), new RegExp(`pass\\s+${t.domain.replace(/\./g, '\\.')}`));
    assert.match(await page.getByTestId('checks').innerText(), /display:flex[\s\S]*outlook \(windows/);
    assert.match(await page.getByTestId('html-score').innerText(), /% of \d+ clients/);
    assert.match(await page.getByTestId('checks-summary').innerText(), /^pass/);
    await screenshot(page, 'message-checks');
    await context.close();
  });

  it('a text-only message: the badge warns with its reasons, and the HTML check says there is no HTML', async () => {
    const to = `plain-${Math.random().toString(36).slice(2, 8)}@${t.domain}`;
    const raw = [`From: app@${t.domain}`, `To: ${to}`, 'Subject: Plain and unsigned', 'Date: Wed, 25 Nov 2026 10:00:00 +0000', '', 'Just text.', ''].join('\r\n');
    await smtpSendOnce(t.relay.smtpHost, t.relay.smtpPort, `app@${t.domain}`, [to], raw);
    const { context, page } = await newPage(b);
    await signIn(page, t);
    const row = page.locator('.message-row').filter({ hasText: 'Plain and unsigned' });
    const badge = row.locator('[data-checks="fail"]');
    await badge.waitFor();
    // No Message-ID fails it; the reasons are the badge's tooltip.
    assert.match((await badge.getAttribute('title')) ?? '', /Message-ID: missing[\s\S]*no DKIM signature/);
    await row.click();
    await page.getByRole('tab', { name: 'Checks' }).click();
    await page.getByTestId('html-none').waitFor();
    assert.equal(await page.getByTestId('html-none').innerText(), 'The message has no HTML.');
    assert.match(await page.getByTestId('checks-summary').innerText(), /^fail[\s\S]*Message-ID: missing/);
    await context.close();
  });
});
