/// <reference lib="dom" />
// (page.evaluate callbacks run in the browser)
// The dashboard's operations in Chromium, checked against the admin and public APIs; a
// cross-site form POST refused; screenshots of every page in light and dark.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { newPage, refreshUntil, relayAndBrowser, screenshot, signIn } from '../helpers/browser.js';
import { plainMessage, submitOnce } from '../helpers/submission.js';

/** A webhook endpoint that always fails with 500, announcing each request. */
async function startFailingEndpoint() {
  let count = 0;
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const server = http.createServer((req, res) => {
    req.resume();
    count += 1;
    for (const w of waiters.filter((w) => count >= w.n)) w.resolve();
    res.writeHead(500).end('nope');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    requests: (n: number) => new Promise<void>((resolve) => (count >= n ? resolve() : waiters.push({ n, resolve }))),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('dashboard operations', () => {
  const env = relayAndBrowser();

  it('creates a key shown once that works over the API, and revokes it so the API answers 401', async () => {
    const { context, page } = await newPage(env.b);
    await signIn(page, env.t);
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByLabel('Key name').fill('ci key');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = await page.getByTestId('secret').innerText();
    assert.match(secret, /^rr_test_\S+$/);
    await screenshot(page, 'key-created');
    const sent = await env.t.api('POST', '/v1/emails', { key: secret, body: { from: `a@${env.t.domain}`, to: `b@${env.t.domain}`, subject: 'With the new key', text: 'x' } });
    assert.equal(sent.status, 202, sent.text);
    await page.getByRole('button', { name: 'Done' }).click();
    const row = page.locator('tr', { hasText: 'ci key' });
    await row.waitFor();
    assert.equal(await page.getByText(secret).count(), 0, 'never shown again');
    await row.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
    await row.getByText(/^revoked/).waitFor();
    assert.notEqual(await row.locator('[data-last-used]').innerText(), 'never', 'the accepted send is its last use');
    const refused = await env.t.api('POST', '/v1/emails', { key: secret, body: { from: `a@${env.t.domain}`, to: `b@${env.t.domain}`, subject: 'x', text: 'x' } });
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error.code, 'invalid_api_key');
    await context.close();
  });

  it("the keys page shows how to configure an application for SMTP submission, with copy buttons", async () => {
    const { context, page } = await newPage(env.b);
    await signIn(page, env.t);
    await page.getByRole('link', { name: 'API keys' }).click();
    const panel = page.locator('[data-submission]');
    await panel.getByRole('heading', { name: 'Send over SMTP' }).waitFor();
    const text = await panel.innerText();
    assert.ok(text.includes(String(env.t.relay.submission.port)), text);
    assert.ok(text.includes(`smtp://127.0.0.1:${env.t.relay.submission.port}`), text);
    assert.match(text, /raven/);
    assert.ok((await panel.getByRole('button', { name: 'Copy' }).count()) >= 4, 'a copy button for host, port, username and URL');
    await context.close();
  });

  it('the email log marks the emails that came over SMTP submission with a badge, in a cell that keeps its column label', async () => {
    const t = env.t;
    const overApi = await t.send({ subject: 'Log badge over the API' });
    assert.equal(overApi.status, 202, overApi.text);
    const reply = await submitOnce(t, t.apiKey, [`ada@${t.domain}`], plainMessage({ from: `app@${t.domain}`, to: `ada@${t.domain}`, subject: 'Log badge over SMTP' }));
    assert.match(reply, /^250 2\.0\.0 em_\w+ queued$/);
    const { context, page } = await newPage(env.b);
    await signIn(page, t);
    await page.goto(`${t.directUrl}/#/emails`);
    const smtpRow = page.locator('tr', { hasText: 'Log badge over SMTP' });
    const apiRow = page.locator('tr', { hasText: 'Log badge over the API' });
    await smtpRow.waitFor();
    await apiRow.waitFor();
    const badge = smtpRow.locator('[data-source="smtp"]');
    assert.equal(await badge.innerText(), 'SMTP');
    assert.equal(await apiRow.locator('[data-source]').count(), 0, 'an email sent through the API has no badge');
    // The phone layout shows each cell with its column's name: the badge's cell keeps it.
    assert.equal(await smtpRow.locator('td', { has: page.locator('[data-source="smtp"]') }).getAttribute('data-label'), 'Subject');
    await context.close();
  });

  it('adds a domain and shows its DNS records with a copy button per value', async () => {
    const { context, page } = await newPage(env.b);
    await signIn(page, env.t);
    await page.getByRole('link', { name: 'Domains' }).click();
    await page.getByLabel('Domain name').fill('mail.newco.test');
    await page.getByRole('button', { name: 'Add domain' }).click();
    const card = page.locator('[data-domain="mail.newco.test"]');
    await card.waitFor();
    const listed = await env.t.admin('GET', `/admin/v1/projects/${env.t.projectId}/domains`);
    const domain = listed.body.domains.find((d: { name: string }) => d.name === 'mail.newco.test');
    assert.ok(domain);
    for (const record of domain.records as Array<{ value: string }>) await card.getByText(record.value, { exact: true }).waitFor();
    assert.equal(await card.getByRole('button', { name: 'Copy value' }).count(), domain.records.length);
    assert.match(await card.innerText(), /pending/);
    await screenshot(page, 'domains');
    await card.getByRole('button', { name: 'Mark verified' }).click();
    await card.locator('.badge-verified').first().waitFor();
    await context.close();
  });

  it('creates a webhook (secret shown once), shows a failed attempt, and resends it', async () => {
    const endpoint = await startFailingEndpoint();
    try {
      const { context, page } = await newPage(env.b);
      await signIn(page, env.t);
      await page.getByRole('link', { name: 'Webhooks' }).click();
      await page.getByLabel('Endpoint URL').fill(endpoint.url);
      await page.getByLabel('email.queued').check();
      await page.getByRole('button', { name: 'Create endpoint' }).click();
      assert.match(await page.getByTestId('secret').innerText(), /^whsec_/);
      await page.getByRole('button', { name: 'Done' }).click();
      const card = page.locator('.card', { hasText: endpoint.url });
      await card.waitFor();

      const sent = await env.t.send({ subject: 'Hook me' });
      assert.equal(sent.status, 202);
      await endpoint.requests(1);
      await card.getByRole('button', { name: 'Deliveries' }).click();
      const firstAttempt = card.locator('tr', { hasText: 'email.queued' }).filter({ has: page.locator('td.status-code', { hasText: '500' }) });
      await refreshUntil(page, () => card.getByRole('button', { name: 'Refresh' }).click(), async () => (await firstAttempt.count()) === 1);
      assert.match(await firstAttempt.innerText(), /\b1\b/);
      await screenshot(page, 'webhooks');

      await firstAttempt.getByRole('button', { name: 'Resend now' }).click();
      await endpoint.requests(2);
      await refreshUntil(page, () => card.getByRole('button', { name: 'Refresh' }).click(), async () => (await card.locator('td.status-code', { hasText: '500' }).count()) === 2);
      const webhooks = await env.t.admin('GET', `/admin/v1/projects/${env.t.projectId}/webhooks`);
      const deliveries = await env.t.admin('GET', `/admin/v1/webhooks/${webhooks.body.webhooks[0].id}/deliveries`);
      assert.deepEqual(deliveries.body.deliveries.map((d: { attempt: number }) => d.attempt).sort(), [1, 2]);

      // The email's page shows the same attempts under its event.
      await page.goto(`${env.t.directUrl}/#/emails/${sent.body.id}`);
      await page.locator('.delivery', { hasText: endpoint.url }).locator('li').nth(1).waitFor();
      await context.close();
    } finally {
      await endpoint.close();
    }
  });

  it('adds, searches and removes a suppression', async () => {
    const { context, page } = await newPage(env.b);
    await signIn(page, env.t);
    await page.getByRole('link', { name: 'Suppressions' }).click();
    await page.getByLabel('Address to suppress').fill('blocked@example.net');
    await page.getByRole('button', { name: 'Suppress' }).click();
    await page.locator('[data-suppression="blocked@example.net"]').waitFor();
    let listed = await env.t.admin('GET', `/admin/v1/workspaces/${env.t.workspaceId}/suppressions`);
    assert.deepEqual(listed.body.suppressions.map((s: { email: string; reason: string }) => [s.email, s.reason]), [['blocked@example.net', 'manual']]);
    await page.getByLabel('Search suppressions').fill('nobody');
    await page.getByText('No suppressed address matches.').waitFor();
    await page.getByLabel('Search suppressions').fill('blocked');
    await page.locator('[data-suppression="blocked@example.net"]').getByRole('button', { name: 'Remove' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove suppression' }).click();
    await page.getByText('No suppressed address matches.').waitFor();
    listed = await env.t.admin('GET', `/admin/v1/workspaces/${env.t.workspaceId}/suppressions`);
    assert.deepEqual(listed.body.suppressions, []);
    await context.close();
  });

  it('shows usage numbers equal to the admin API', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await env.t.send({ subject: `Usage ${i}`, cc: `cc${i}@${env.t.domain}` })).status, 202);
    const usage = (await env.t.admin('GET', `/admin/v1/workspaces/${env.t.workspaceId}/usage`)).body;
    const daily = (await env.t.admin('GET', `/admin/v1/workspaces/${env.t.workspaceId}/usage/daily`)).body;
    const { context, page } = await newPage(env.b);
    await signIn(page, env.t);
    await page.getByRole('link', { name: 'Usage' }).click();
    const workspace = page.getByTestId('workspace-usage');
    await workspace.waitFor();
    assert.match(await workspace.innerText(), new RegExp(`${usage.workspace.used}\\s*/\\s*${usage.workspace.limit.toLocaleString('en-US')}`));
    for (const key of usage.keys as Array<{ id: string; used: number }>) {
      assert.match(await page.locator(`[data-usage-key="${key.id}"]`).innerText(), new RegExp(`\\b${key.used}\\b`));
    }
    assert.equal(daily.days.length, 30);
    const today = daily.days[29];
    assert.ok(today.emails >= 3);
    await page.locator('svg.chart title', { hasText: `${today.date}: ${today.emails}` }).waitFor({ state: 'attached' });
    await screenshot(page, 'usage');
    await context.close();
  });

  it('refuses a cross-site form POST to a dashboard action, even with the session cookie', async () => {
    const evil = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<form method="POST" action="${env.t.directUrl}/admin/v1/workspaces" enctype="text/plain">
        <input name='{"name":"pwned","x":"' value='"}'></form><script>document.forms[0].submit()</script>`);
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    try {
      const { context, page } = await newPage(env.b);
      await signIn(page, env.t);
      const response = page.waitForResponse((r) => r.url().endsWith('/admin/v1/workspaces') && r.request().method() === 'POST');
      await page.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`);
      const refused = await response;
      assert.equal(refused.status(), 403);
      assert.equal((await refused.json()).error.code, 'forbidden');
      const workspaces = await env.t.admin('GET', '/admin/v1/workspaces');
      assert.equal(workspaces.body.workspaces.some((w: { name: string }) => w.name === 'pwned'), false);
      // The same request from the dashboard itself (with its CSRF token) is fine.
      await page.goto(`${env.t.directUrl}/#/workspaces`);
      await page.getByLabel('New workspace name').fill('legit');
      await page.getByRole('button', { name: 'Create workspace' }).click();
      await page.locator('tr', { hasText: 'legit' }).waitFor();
      await context.close();
    } finally {
      await new Promise<void>((resolve) => evil.close(() => resolve()));
    }
  });

  it('keeps a screenshot of every page in light and dark', async () => {
    const sent = await env.t.send({ subject: 'Screenshot', html: '<h1>Hello</h1><p>An HTML body.</p>', tags: { kind: 'welcome' } });
    await env.t.waitForFinal(sent.body.id);
    // The inbox indexes a capture after it commits, off the sink's path: wait until search finds it
    // (delivered is not yet indexed on a loaded machine).
    let message: string | undefined;
    while (!(message = (await env.t.admin('GET', '/admin/v1/inbox?q=subject:screenshot')).body.messages[0]?.id)) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // One context signed in once: the second pass switches the scheme.
    const { context, page } = await newPage(env.b);
    await signIn(page, env.t);
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      const pages: Array<[string, string, string]> = [
        ['inbox', '#/inbox', '.message-row'],
        ['message', `#/inbox/${message}`, 'iframe'],
        ['email-log', '#/emails', 'td a'],
        ['email', `#/emails/${sent.body.id}`, '.timeline li'],
        ['workspaces', '#/workspaces', 'td code'],
        ['domains', '#/domains', '.records'],
        ['keys', '#/keys', 'td code'],
        ['webhooks', '#/webhooks', 'form'],
        ['suppressions', '#/suppressions', 'form'],
        ['usage', '#/usage', 'svg.chart'],
        ['clock', '#/clock', 'h1'],
      ];
      for (const [name, hash, ready] of pages) {
        await page.goto(`${env.t.directUrl}/${hash}`);
        await page.locator(ready).first().waitFor();
        await screenshot(page, name);
      }
    }
    await context.close();
  });
});
