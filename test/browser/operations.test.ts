/// <reference lib="dom" />
// (page.evaluate callbacks run in the browser)
// Delivery insight and webhook operations in the dashboard (issue 25), in Chromium, each checked
// against the admin API: the email page's timeline of attempts (TLS version and certificate over a
// real STARTTLS upstream; Retry now), recover with the count in its confirmation after a receiver
// outage, each webhook attempt's status, time and answer, disable and enable an endpoint, rotate its
// signing secret (the new one shown once; both signatures on the next request), pause and
// resume a project's delivery, and reputation on the usage page.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { newPage, refreshUntil, relayAndBrowser, screenshot, signIn } from '../helpers/browser.js';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js';
import { makeSelfSignedCert } from '../helpers/tls-cert.js';
import { advanceClock, createEndpoint, deliveries, startReceiver, waitForAttempts, type Receiver } from '../helpers/webhooks.js';
import { WEBHOOK_RETRY_DELAYS_SECONDS } from '../../relay/webhooks/schedule.js';
import { computeSignature } from '../../sdk/webhooks.js';

const OUTAGE = '<h1>503 down for maintenance</h1>';

describe('webhook operations, delivery control and reputation (sink, test clock)', () => {
  const env = relayAndBrowser({ flags: { testClock: true } });
  let receiver: Receiver;
  before(async () => {
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
  });

  it("recover after an outage: each attempt's status, time and answer; the count in the confirmation", async () => {
    receiver.answer = () => ({ status: 503, body: OUTAGE });
    const hook = await createEndpoint(env.t, receiver.url, ['email.queued']);
    const since = new Date(Date.parse((await env.t.admin('GET', '/admin/v1/clock')).body.now) - 60_000);
    assert.equal((await env.t.send({ subject: 'During the outage' })).status, 202);
    await waitForAttempts(env.t, hook.id, 1);
    for (const [i, delay] of WEBHOOK_RETRY_DELAYS_SECONDS.entries()) {
      await advanceClock(env.t, delay);
      await waitForAttempts(env.t, hook.id, i + 2);
    }

    const { context, page } = await newPage(env.b);
    await signIn(page, env.t);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    const card = page.locator(`[data-webhook="${hook.id}"]`);
    await card.getByRole('button', { name: 'Deliveries' }).click();
    const rows = card.locator('tbody tr');
    await refreshUntil(page, () => card.getByRole('button', { name: 'Refresh' }).click(), async () => (await rows.count()) === 7);
    const last = card.locator('tr[data-attempt="7"]');
    assert.equal(await last.locator('td.status-code').innerText(), '503');
    assert.match(await last.locator('td.took').innerText(), /^\d+ ms$/);
    await last.locator('.answer summary').click();
    // The answer is shown as text: its markup is not parsed into the page.
    assert.equal(await last.locator('pre.answer').innerText(), OUTAGE);
    assert.equal(await card.locator('pre.answer h1').count(), 0);
    await screenshot(page, 'webhook-attempts');

    receiver.answer = () => ({ status: 200, body: 'ok' });
    // datetime-local takes the browser's local time without a zone.
    const local = await page.evaluate((iso) => {
      const d = new Date(iso);
      d.setMinutes(d.getMinutes() - d.getTimezoneOffset());
      return d.toISOString().slice(0, 16);
    }, since.toISOString());
    await card.getByLabel('Recover failed deliveries since').fill(local);
    await card.getByRole('button', { name: 'Recover…' }).click();
    const dialog = page.getByRole('dialog');
    assert.equal(await dialog.getByRole('heading').innerText(), 'Send 1 failed delivery again?');
    await screenshot(page, 'webhook-recover-confirm');
    await dialog.getByRole('button', { name: 'Send 1 again' }).click();
    await card.getByRole('status').getByText('1 failed delivery sent again.').waitFor();
    await receiver.waitForCount(8);
    const [recovered] = await waitForAttempts(env.t, hook.id, 8);
    assert.deepEqual([recovered!.attempt, recovered!.status_code, recovered!.response_body], [8, 200, 'ok']);
    await refreshUntil(page, () => card.getByRole('button', { name: 'Refresh' }).click(), async () => (await card.locator('tr[data-attempt="8"]').count()) === 1);
    assert.equal(await card.locator('tr[data-attempt="8"] td.status-code').innerText(), '200');

    // Nothing failed is left: the dashboard says so without asking.
    await card.getByRole('button', { name: 'Recover…' }).click();
    await card.getByRole('status').getByText(/No failed delivery since/).waitFor();
    assert.equal(await page.getByRole('dialog').count(), 0);
    await context.close();
  });

  it('disables and enables an endpoint', async () => {
    const hook = await createEndpoint(env.t, receiver.url, ['email.sent']);
    const { context, page } = await newPage(env.b);
    await signIn(page, env.t);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    const card = page.locator(`[data-webhook="${hook.id}"]`);
    await card.getByRole('button', { name: 'Disable' }).click();
    await card.locator('.badge-disabled').waitFor();
    const enabledOf = async () =>
      (await env.t.admin('GET', `/admin/v1/projects/${env.t.projectId}/webhooks`)).body.webhooks.find((w: { id: string }) => w.id === hook.id).enabled;
    assert.equal(await enabledOf(), false);
    await screenshot(page, 'webhook-disabled');
    await card.getByRole('button', { name: 'Enable' }).click();
    await card.locator('.badge-disabled').waitFor({ state: 'detached' });
    assert.equal(await enabledOf(), true);
    await context.close();
  });

  it("rotates an endpoint's signing secret: the overlap asked, a 422 shown, the new secret once, then both v1= entries", async () => {
    const own = await startReceiver();
    try {
      const hook = await createEndpoint(env.t, own.url, ['email.queued']);
      const { context, page } = await newPage(env.b);
      await signIn(page, env.t);
      await page.getByRole('link', { name: 'Webhooks' }).click();
      const card = page.locator(`[data-webhook="${hook.id}"]`);
      const dialog = page.getByRole('dialog');
      const rotate = async (hours: string) => {
        await card.getByRole('button', { name: 'Rotate secret' }).click();
        assert.equal(await dialog.getByRole('heading').innerText(), 'Rotate the signing secret?');
        assert.equal(await dialog.getByLabel('Overlap in hours').inputValue(), '24');
        await dialog.getByLabel('Overlap in hours').fill(hours);
        await dialog.getByRole('button', { name: 'Rotate secret' }).click();
      };

      // Past 7 days: the relay's 422, as it says it.
      await rotate('169');
      assert.equal(await page.getByRole('alert').innerText(), 'Validation failed: overlap_seconds: must be a whole number of seconds from 0 to 604800.');

      await rotate('2');
      assert.equal(await dialog.getByRole('heading').innerText(), 'The new signing secret');
      const newSecret = await dialog.getByTestId('secret').innerText();
      assert.match(newSecret, /^whsec_/);
      assert.notEqual(newSecret, hook.secret);
      assert.equal(await dialog.getByRole('button', { name: 'Copy' }).count(), 1);
      assert.match(await dialog.getByTestId('overlap-note').innerText(), /^Until about .+ \(2 hours from now\) every request is signed with both secrets/);
      await screenshot(page, 'webhook-rotated');
      await dialog.getByRole('button', { name: 'Done' }).click();
      assert.equal(await dialog.count(), 0);
      await context.close();

      // A real request afterwards: signed with the new secret, then the old one.
      assert.equal((await env.t.send({ subject: 'After the rotation' })).status, 202);
      const [request] = await own.waitForCount(1);
      const ts = String(request!.headers['service-timestamp']);
      assert.deepEqual(String(request!.headers['service-signature']).split(','), [
        `v1=${computeSignature(request!.raw, newSecret, ts)}`,
        `v1=${computeSignature(request!.raw, hook.secret, ts)}`,
      ]);
    } finally {
      await own.close();
    }
  });

  it("pauses and resumes a project's delivery from the projects table", async () => {
    const { context, page } = await newPage(env.b);
    await signIn(page, env.t);
    await page.getByRole('link', { name: 'Workspaces' }).click();
    const toggle = page.locator('.delivery-toggle').first();
    await toggle.getByRole('button', { name: 'Pause delivery' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Pause delivery' }).click();
    await page.locator('.delivery-toggle[data-paused="true"]').waitFor();
    const state = async () => (await env.t.admin('GET', `/admin/v1/projects/${env.t.projectId}/delivery`)).body.delivery_paused;
    assert.equal(await state(), true);
    await screenshot(page, 'project-paused');
    await toggle.getByRole('button', { name: 'Resume delivery' }).click();
    await page.locator('.delivery-toggle[data-paused="false"]').waitFor();
    assert.equal(await state(), false);
    await context.close();
  });

  it("the email page's timeline of attempts: a delayed recipient, Retry now, then delivered", async () => {
    const sent = await env.t.send({ subject: 'Delayed once', to: `delayed@${env.t.domain}` });
    assert.equal(sent.status, 202);
    const { context, page } = await newPage(env.b);
    await signIn(page, env.t);
    await page.goto(`${env.t.directUrl}/#/emails/${sent.body.id}`);
    const attempts = page.locator('.delivery-attempts');
    const first = attempts.locator('li[data-outcome="delivery_delayed"]');
    await refreshUntil(page, async () => void (await page.reload()), async () => (await first.count()) === 1);
    assert.match(await first.innerText(), /#1 delayed@/);
    assert.match(await first.locator('.tls').innerText(), /^no TLS$/);
    await first.getByText(/SMTP conversation/).click();
    assert.match(await first.locator('pre.transcript').innerText(), /C: RCPT TO:<delayed@/);
    await screenshot(page, 'email-attempts');
    await attempts.getByRole('button', { name: 'Retry now' }).click();
    await refreshUntil(page, async () => void (await page.reload()), async () => (await attempts.locator('li[data-outcome="delivered"]').count()) === 1);
    const api = (await env.t.admin('GET', `/admin/v1/emails/${sent.body.id}/attempts`)).body.attempts as Array<{ attempt: number; outcome: string }>;
    assert.deepEqual(api.map((a) => [a.attempt, a.outcome]), [[1, 'delivery_delayed'], [2, 'delivered']]);
    await context.close();
  });

  it('shows reputation on the usage page: rates per window with their levels, as the API says', async () => {
    for (const to of [`bounced@${env.t.domain}`, `fine@${env.t.domain}`]) {
      const sent = await env.t.send({ subject: 'Reputation', to });
      await env.t.waitForFinal(sent.body.id);
    }
    const reputation = (await env.t.admin('GET', `/admin/v1/workspaces/${env.t.workspaceId}/reputation`)).body;
    const day = reputation.windows.find((w: { days: number }) => w.days === 1);
    assert.ok(day.bounced >= 1 && day.bounce_level !== 'ok', JSON.stringify(day));
    const { context, page } = await newPage(env.b);
    await signIn(page, env.t);
    await page.getByRole('link', { name: 'Usage' }).click();
    const cell = page.getByTestId('reputation').locator('tr[data-scope="workspace"] td[data-days="1"]');
    await cell.waitFor();
    const text = await cell.innerText();
    assert.match(text, new RegExp(`${day.sent} sent`));
    assert.match(text, new RegExp(`Bounces ${(day.bounce_rate * 100).toFixed(1)} %`));
    assert.equal(await cell.locator(`[data-rate="bounce"] .badge-${day.bounce_level}`).count(), 1);
    assert.equal(await cell.locator(`[data-rate="complaint"] .badge-${day.complaint_level}`).count(), 1);
    assert.equal(await page.getByTestId('reputation').locator(`tr[data-scope="${env.t.projectId}"]`).count(), 1);
    await screenshot(page, 'usage-reputation', { fullPage: true });
    await context.close();
  });
});

describe('the email page over a STARTTLS upstream: TLS version and a verified certificate', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'raven-browser-tls-'));
  const cert = makeSelfSignedCert(dir, 'upstream');
  let upstream: FakeUpstream;
  // Registered first, so the upstream listens before relayAndBrowser's before() starts the relay.
  before(async () => {
    upstream = await startFakeUpstream({}, { tls: { key: readFileSync(cert.keyFile), cert: cert.cert } });
  });
  const env = relayAndBrowser({
    flags: {
      // Read when the relay starts (after the before() above): the upstream's port is known then.
      get upstream() {
        return `smtp://localhost:${upstream.port}`;
      },
      upstreamCa: cert.certFile,
    },
  });
  after(async () => {
    await upstream.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows the TLS version and that the certificate verified', async () => {
    const sent = await env.t.send({ subject: 'Over TLS' });
    await env.t.waitForFinal(sent.body.id);
    const { context, page } = await newPage(env.b);
    await signIn(page, env.t);
    await page.goto(`${env.t.directUrl}/#/emails/${sent.body.id}`);
    const attempt = page.locator('.delivery-attempts li[data-outcome="sent"]');
    await attempt.waitFor();
    assert.match(await attempt.locator('.tls').innerText(), /^TLSv1\.[23], certificate verified$/);
    await screenshot(page, 'email-attempts-tls');
    await context.close();
  });
});
