/// <reference lib="dom" />
// (page.evaluate callbacks run in the browser)
// The inbox's project selector in Chromium (issue 23): the unread count of each project and of all
// projects, kept live as mail comes in and is read (GET /admin/v1/inbox/unread on every frame of
// the inbox WebSocket); and the tag: and message-id: terms from the search box and its help.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import nodemailer from 'nodemailer';
import { createProjectWithKey } from '../helpers/start-relay.js';
import { newPage, relayAndBrowser, screenshot, signIn } from '../helpers/browser.js';

describe('dashboard inbox: unread per project, tag: and message-id:', () => {
  const env = relayAndBrowser();

  it('shows each project\'s unread count in the selector, live, and finds mail by tag and Message-ID', async () => {
    const other = await createProjectWithKey(env.t);
    const { context, page } = await newPage(env.b);
    await signIn(page, env.t);
    const selector = page.getByLabel('Inbox project');
    const optionText = async (value: string) => (await selector.locator(`option[value="${value}"]`).textContent()) ?? '';
    const waitForOption = (value: string, text: string) =>
      page.waitForFunction(
        ([v, want]) => document.querySelector(`select[aria-label="Inbox project"] option[value="${v}"]`)?.textContent === want,
        [value, text] as const,
      );
    const mineName = (await optionText(env.t.projectId)).trim();
    const otherName = (await optionText(other.projectId)).trim();
    assert.equal(await optionText(''), 'All projects');

    // Mail comes in while the page is open: the counts follow without a reload.
    const theirs = await env.t.send({ from: `app@${other.domain}`, to: `bob@${other.domain}`, subject: 'Welcome, Bob', tags: { signup: 'web' } }, { key: other.key });
    assert.equal(theirs.status, 202, theirs.text);
    await waitForOption(other.projectId, `${otherName} · 1 unread`);
    await waitForOption('', 'All projects · 1 unread');
    assert.equal(await optionText(env.t.projectId), mineName);

    const transport = nodemailer.createTransport({ host: env.t.relay.smtpHost, port: env.t.relay.smtpPort, ignoreTLS: true });
    try {
      await transport.sendMail({ from: 'ci@tags.test', to: 'qa@tags.test', subject: 'Nightly build', text: 'Green.', messageId: '<build.42@ci.test>', headers: { 'X-Tags': 'nightly, plan=pro' } });
    } finally {
      transport.close();
    }
    // Mail of no project counts in all projects only.
    await waitForOption('', 'All projects · 2 unread');
    assert.equal(await optionText(other.projectId), `${otherName} · 1 unread`);
    await screenshot(page, 'inbox-unread-per-project');

    // Reading it (elsewhere: the API) takes it off the count.
    const [welcome] = (await env.t.admin('GET', `/admin/v1/inbox?project=${other.projectId}`)).body.messages;
    assert.equal((await env.t.admin('POST', `/admin/v1/messages/${welcome.id}/read`, { read: true })).status, 200);
    await waitForOption(other.projectId, otherName);
    await waitForOption('', 'All projects · 1 unread');

    // The new terms from the search box, and the help that lists them.
    const rows = page.locator('.message-row');
    await page.getByLabel('Search captured mail').fill('tag:signup=web');
    await page.waitForFunction(() => document.querySelectorAll('.message-row').length === 1);
    assert.match(await rows.first().innerText(), /Welcome, Bob/);
    await page.getByLabel('Search captured mail').fill('message-id:<BUILD.42@ci.test>');
    await page.waitForFunction(() => document.querySelector('.message-row')?.textContent?.includes('Nightly build') === true && document.querySelectorAll('.message-row').length === 1);
    await page.getByLabel('Search captured mail').fill('-tag:nightly');
    await page.waitForFunction(() => document.querySelectorAll('.message-row').length === 1 && document.querySelector('.message-row')?.textContent?.includes('Welcome, Bob') === true);
    await page.getByLabel('Search help').click();
    await page.getByRole('note').getByText('tag:signup, tag:plan=pro').waitFor();
    await page.getByRole('note').getByText('message-id:<id@host>').waitFor();
    await context.close();
  });
});
