/// <reference lib="dom" />
// (page.evaluate callbacks run in the browser)
// Sign-in, sign-out and the one-time link, in Chromium (CONTRACT section 8).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newPage, relayAndBrowser, screenshot, signIn } from '../helpers/browser.js';

describe('dashboard sign-in', () => {
  const env = relayAndBrowser();

  it('answers GET / with the page and strict security headers, without a session', async () => {
    const res = await fetch(env.t.directUrl + '/', { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /^text\/html/);
    assert.match(res.headers.get('content-security-policy')!, /default-src 'self'.*script-src 'self'.*frame-ancestors 'none'/);
    assert.equal(res.headers.get('x-frame-options'), 'DENY');
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(res.headers.get('cache-control'), 'no-cache');
    const html = await res.text();
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)![1]!;
    const asset = await fetch(env.t.directUrl + script, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(asset.status, 200);
    assert.equal(asset.headers.get('content-encoding'), 'gzip');
    assert.match(asset.headers.get('cache-control')!, /immutable/);
    assert.ok(asset.headers.get('content-security-policy'));
    const again = await fetch(env.t.directUrl + script, { headers: { 'if-none-match': asset.headers.get('etag')! } });
    assert.equal(again.status, 304);
    // The dashboard never shadows the API: unknown API paths keep their JSON 404.
    const unknown = await fetch(env.t.directUrl + '/admin/v1/nope');
    assert.equal(unknown.status, 404);
    assert.equal((await unknown.json()).error.code, 'not_found');
  });

  it('shows only a password field without a session, refuses a wrong token, signs in and out', async () => {
    const { context, page } = await newPage(env.b);
    await page.goto(env.t.directUrl + '/');
    const form = page.locator('form');
    await form.waitFor();
    const inputs = await page.locator('input, textarea, select').evaluateAll((els) => els.map((e) => (e as HTMLInputElement).type));
    assert.deepEqual(inputs, ['password']);
    assert.equal(await page.getByRole('navigation', { name: 'Main' }).count(), 0);
    await screenshot(page, 'sign-in');

    await page.locator('#admin-token').fill('not-the-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    assert.match(await page.getByRole('alert').innerText(), /not the admin token/);
    assert.equal(await page.locator('#admin-token').count(), 1);

    await signIn(page, env.t);
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === 'raven_session')!;
    assert.ok(session, 'a session cookie');
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, 'Strict');
    assert.ok(session.expires > Date.now() / 1000, 'the cookie expires');
    // HttpOnly: the page's own script cannot read it.
    assert.equal(await page.evaluate(() => document.cookie.includes('raven_session')), false);

    // A reload keeps the session.
    await page.reload();
    await page.getByRole('navigation', { name: 'Main' }).waitFor();

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.locator('#admin-token').waitFor();
    // The old cookie no longer works, even if replayed.
    const replay = await fetch(env.t.directUrl + '/admin/v1/session', { headers: { cookie: `raven_session=${session.value}` } });
    assert.equal(replay.status, 401);
    await page.reload();
    await page.locator('#admin-token').waitFor();
    await context.close();
  });

  it('signs in once with the start-up link, which leaves the address bar at once', async () => {
    const { context, page } = await newPage(env.b);
    const link = env.t.relay.dashboardUrl;
    assert.match(link, /^http:\/\/127\.0\.0\.1:\d+\/#signin=[A-Za-z0-9_-]+$/);
    await page.goto(link);
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    assert.doesNotMatch(page.url(), /signin/);
    await context.close();

    const second = await newPage(env.b);
    await second.page.goto(link);
    await second.page.getByRole('alert').waitFor();
    assert.match(await second.page.getByRole('alert').innerText(), /expired or was already used/);
    assert.equal(await second.page.locator('#admin-token').count(), 1);
    await second.context.close();
  });
});
