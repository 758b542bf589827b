/// <reference lib="dom" />
// (page.evaluate callbacks run in the browser)
// The inbox in Chromium: live arrival, text-only rendering of mail strings, search, keyboard,
// read flags and deleting.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { newPage, relayAndBrowser, screenshot, signIn } from '../helpers/browser.js';
import { smtpSendOnce } from '../helpers/smtp-send.js';

function rawMessage(fields: { from: string; to: string; subject: string; text: string }): string {
  return [
    `From: ${fields.from}`,
    `To: ${fields.to}`,
    `Subject: ${fields.subject}`,
    'Date: Tue, 24 Nov 2026 10:00:00 +0000',
    `Message-ID: <${Math.random().toString(36).slice(2)}@test>`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    fields.text,
    '',
  ].join('\r\n');
}

const rows = (page: Page) => page.locator('.message-row');

describe('dashboard inbox', () => {
  const env = relayAndBrowser();

  async function capture(fields: { from: string; to: string; subject: string; text: string }) {
    await smtpSendOnce(env.t.relay.smtpHost, env.t.relay.smtpPort, fields.from.replace(/.*</, '').replace(/>.*/, ''), [fields.to.replace(/.*</, '').replace(/>.*/, '')], rawMessage(fields));
  }

  it('shows a message sent over the API in the open inbox without a reload, unread and counted', async () => {
    const { context, page } = await newPage(env.b);
    await signIn(page, env.t);
    await page.getByText('No mail yet.').waitFor();
    const sent = await env.t.send({ from: `Ada Lovelace <ada@${env.t.domain}>`, to: `grace@${env.t.domain}`, subject: 'Live arrival', text: 'It came over the socket.' });
    assert.equal(sent.status, 202, sent.text);
    const row = rows(page).filter({ hasText: 'Live arrival' });
    await row.waitFor();
    assert.match(await row.innerText(), /Ada Lovelace/);
    assert.match(await row.innerText(), /It came over the socket/);
    assert.match(await row.getAttribute('class') ?? '', /unread/);
    await page.getByTestId('inbox-count').filter({ hasText: '1' }).waitFor();
    await screenshot(page, 'inbox');

    // Opening reads it, and shows the API email it belongs to.
    await row.click();
    await page.getByTestId('subject').filter({ hasText: 'Live arrival' }).waitFor();
    await page.getByTestId('email-link').filter({ hasText: sent.body.id }).waitFor();
    await page.getByRole('button', { name: 'Mark unread' }).waitFor();
    await page.getByRole('link', { name: '← Inbox' }).click();
    await page.locator('.message-row:not(.unread)').filter({ hasText: 'Live arrival' }).waitFor();
    const entry = await env.t.admin('GET', '/admin/v1/inbox');
    assert.equal(entry.body.messages[0].read, true);
    assert.equal(entry.body.unread, 0);
    await context.close();
  });

  it('renders a subject and a display name made of HTML as text', async () => {
    const hostile = '<img src=x onerror="document.title=\'pwned\'"><b>bold</b>';
    await capture({ from: `"${hostile}" <evil@example.net>`, to: 'victim@example.net', subject: hostile, text: '<script>document.title="pwned"</script>' });
    const { context, page } = await newPage(env.b);
    await signIn(page, env.t);
    const row = rows(page).filter({ hasText: '<b>bold</b>' }).first();
    await row.waitFor();
    assert.equal(await row.locator('env.b, img').count(), 0, 'no element was made from the strings');
    assert.match(await row.locator('.from').innerText(), /<img src=x onerror=/);
    await row.click();
    await page.getByTestId('subject').waitFor();
    assert.equal(await page.getByTestId('subject').innerText(), hostile);
    assert.equal(await page.locator('article env.b, article img').count(), 0);
    await page.getByRole('tab', { name: 'Headers' }).click();
    await page.locator('.headers-table').getByText(hostile).first().waitFor();
    assert.notEqual(await page.title(), 'pwned');
    await context.close();
  });

  it('searches with free text, from:, to:, subject: and is:unread, and pages with a cursor', async () => {
    await env.t.admin('DELETE', '/admin/v1/messages');
    await capture({ from: 'Alice <alice@alpha.test>', to: 'bob@beta.test', subject: 'Quarterly report', text: 'numbers inside' });
    await capture({ from: 'Carol <carol@gamma.test>', to: 'dave@delta.test', subject: 'Lunch plans', text: 'quarterly lunch?' });
    await capture({ from: 'Erin <erin@alpha.test>', to: 'frank@beta.test', subject: 'Invoice 42', text: 'pay me' });
    const { context, page } = await newPage(env.b);
    await signIn(page, env.t);
    await rows(page).nth(2).waitFor();
    const search = async (q: string, expected: string[]) => {
      await page.locator('#search').fill(q);
      await page.waitForFunction(
        (want) => {
          const got = Array.from(document.querySelectorAll('.message-row .subject'), (e) => e.textContent);
          return JSON.stringify(got) === JSON.stringify(want);
        },
        expected,
      );
    };
    await search('quarterly', ['Lunch plans', 'Quarterly report']);
    await search('from:alpha.test', ['Invoice 42', 'Quarterly report']);
    await search('from:alice', ['Quarterly report']);
    await search('to:beta.test subject:invoice', ['Invoice 42']);
    await search('subject:"lunch plans"', ['Lunch plans']);
    // Two characters are below the trigram index: they are matched by a scan, with the same result.
    await search('to:de', ['Lunch plans']);
    await search('"quarterly report" from:al', ['Quarterly report']);
    // Read one, then is:unread leaves it out.
    const invoice = (await env.t.admin('GET', '/admin/v1/inbox?q=subject:invoice')).body.messages[0];
    assert.equal((await env.t.admin('POST', `/admin/v1/messages/${invoice.id}/read`, { read: true })).status, 200);
    await search('is:unread from:alpha', ['Quarterly report']);
    await search('is:read', ['Invoice 42']);
    await search('nothing-matches-this', []);
    await page.getByText('No message matches this search.').waitFor();

    // Cursor paging over the API: two pages of one and two, no repeats.
    const first = await env.t.admin('GET', '/admin/v1/inbox?limit=2');
    assert.equal(first.body.messages.length, 2);
    assert.ok(first.body.next_cursor);
    const second = await env.t.admin('GET', `/admin/v1/inbox?limit=2&cursor=${first.body.next_cursor}`);
    assert.deepEqual(second.body.messages.map((m: { subject: string }) => m.subject), ['Quarterly report']);
    assert.equal(second.body.next_cursor, null);
    assert.equal((await env.t.admin('GET', '/admin/v1/inbox?cursor=bogus')).status, 422);
    await context.close();
  });

  it('moves with j/k, opens with Enter, deletes with Delete, focuses search with /', async () => {
    await env.t.admin('DELETE', '/admin/v1/messages');
    for (const n of [1, 2, 3]) await capture({ from: 'k@keys.test', to: 'x@keys.test', subject: `Key ${n}`, text: 'k' });
    const { context, page } = await newPage(env.b);
    await signIn(page, env.t);
    await rows(page).nth(2).waitFor();
    await page.keyboard.press('j');
    await page.locator('.message-row.selected').filter({ hasText: 'Key 2' }).waitFor();
    await page.keyboard.press('Delete');
    await page.waitForFunction(() => document.querySelectorAll('.message-row').length === 2);
    assert.equal((await env.t.admin('GET', '/admin/v1/inbox')).body.messages.length, 2);
    await page.keyboard.press('k');
    await page.locator('.message-row.selected').filter({ hasText: 'Key 3' }).waitFor();
    await page.keyboard.press('Enter');
    await page.getByTestId('subject').filter({ hasText: 'Key 3' }).waitFor();
    await page.goBack();
    await rows(page).first().waitFor();
    await page.keyboard.press('/');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'search');
    await context.close();
  });
});
