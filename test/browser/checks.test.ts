// The Checks tab in Chromium: a message the relay delivered shows DKIM pass for its domain, and
// its HTML's unsupported features, as text.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { launchBrowser, newPage, screenshot, signIn, type TestBrowser } from '../helpers/browser.js';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';

describe('dashboard checks tab', () => {
  let t: TestRelay;
  let b: TestBrowser;
  before(async () => {
    [t, b] = await Promise.all([startTestRelay(), launchBrowser()]);
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
    await page.locator('.message-row').filter({ hasText: 'Checks tab' }).click();
    await page.getByTestId('subject').filter({ hasText: 'Checks tab' }).waitFor();
    await page.getByRole('tab', { name: 'Checks' }).click();
    const dkim = page.getByTestId('check-dkim');
    await dkim.waitFor();
    assert.match(await dkim.innerText(), new RegExp(`pass\\s+${t.domain.replace(/\./g, '\\.')}`));
    assert.match(await page.getByTestId('checks').innerText(), /display:flex[\s\S]*outlook \(windows/);
    assert.match(await page.getByTestId('html-score').innerText(), /% of \d+ clients/);
    await screenshot(page, 'message-checks');
    await context.close();
  });
});
