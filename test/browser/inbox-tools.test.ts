/// <reference lib="dom" />
// (page.evaluate callbacks run in the browser)
// The inbox as a test fixture in Chromium (CONTRACT section 10): the inbox's project selector
// scopes it, the search box explains its syntax, and a message shows its codes and links with
// copy buttons, as text.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createProjectWithKey } from '../helpers/start-relay.js';
import { newPage, relayAndBrowser, screenshot, signIn } from '../helpers/browser.js';

describe('dashboard inbox: projects, search help, codes and links', () => {
  const env = relayAndBrowser();

  it('scopes the inbox to a project, explains the search, and shows a code and a link to copy', async () => {
    const other = await createProjectWithKey(env.t);
    const mine = await env.t.send({
      to: `ada@${env.t.domain}`,
      subject: 'Confirm your sign-up',
      html: '<p>Your verification code is <b>551203</b>.</p><p><a href="https://app.test/confirm?t=1">Confirm &lt;b&gt;now&lt;/b&gt;</a></p>',
    });
    const theirs = await env.t.send({ from: `app@${other.domain}`, to: `bob@${other.domain}`, subject: 'Other project mail' }, { key: other.key });
    assert.equal(mine.status, 202, mine.text);
    assert.equal(theirs.status, 202, theirs.text);
    for (const to of [`ada@${env.t.domain}`, `bob@${other.domain}`]) assert.equal((await env.t.admin('GET', `/admin/v1/messages/wait?to=${to}`)).status, 200);

    const { context, page } = await newPage(env.b);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: env.t.directUrl });
    await signIn(page, env.t);
    const rows = page.locator('.message-row');
    await rows.filter({ hasText: 'Other project mail' }).waitFor();
    await rows.filter({ hasText: 'Confirm your sign-up' }).waitFor();

    // The project selector: only that project's mail, then all again.
    await page.getByLabel('Inbox project').selectOption(other.projectId);
    await page.waitForFunction(() => document.querySelectorAll('.message-row').length === 1);
    assert.match(await rows.first().innerText(), /Other project mail/);
    await page.getByLabel('Inbox project').selectOption('');
    await page.waitForFunction(() => document.querySelectorAll('.message-row').length === 2);

    // The search help.
    await page.getByLabel('Search help').click();
    await page.getByRole('note').getByText('subject:"weekly report"').waitFor();
    await screenshot(page, 'inbox-search-help');
    await page.getByLabel('Search help').click();

    // The message: its code and its link, as text, each with a copy button.
    await rows.filter({ hasText: 'Confirm your sign-up' }).click();
    await page.getByTestId('code').filter({ hasText: '551203' }).waitFor();
    const link = page.getByTestId('link');
    assert.equal(await link.innerText(), 'Confirm <b>now</b>');
    assert.equal(await link.getAttribute('href'), 'https://app.test/confirm?t=1');
    await page.getByRole('button', { name: 'Copy code: 551203' }).click();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), '551203');
    await page.getByRole('button', { name: 'Copy link: https://app.test/confirm?t=1' }).click();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), 'https://app.test/confirm?t=1');
    await screenshot(page, 'message-codes-links');
    await context.close();
  });
});
