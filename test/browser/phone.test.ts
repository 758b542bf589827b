/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// (page.evaluate callbacks run in the browser)
// The dashboard at phone width (issue 20) in Chromium, 360x740 and 390x844, light and dark: no
// page scrolls sideways, the navigation folds into a header with a menu button, the controls a
// user needs are on screen and can be tapped; the usage chart's labels; the unread badge on a
// fresh load of any page. Full-page screenshots of every page at 360 px, light and dark, in
// test-artifacts/screenshots/phone-360-*.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { DESKTOP, newPage, relayAndBrowser, screenshot, signIn } from '../helpers/browser.js';

const PHONES = [
  { width: 360, height: 740 },
  { width: 390, height: 844 },
];
/** The collapsed navigation is a header no taller than this (the issue: 340 of 844 px). */
const HEADER_MAX_PX = 64;

type Viewport = { width: number; height: number };

/** What sticks out of the viewport sideways: the page's scroll width and every element whose box
 * crosses an edge (unless an ancestor clips it on purpose: ellipsis, a scrolling block). */
async function overflow(page: Page, viewport: Viewport) {
  // (no named functions inside: the test's compiler would wrap them in a helper the page lacks)
  return page.evaluate((width) => {
    const outside: string[] = [];
    // Whether an element or an ancestor below body clips sideways: elements come in document
    // order, so a parent's answer is known before its children's (one style lookup an element).
    const clips = new Map<Element, boolean>();
    for (const el of document.querySelectorAll('body *')) {
      const parent = el.parentElement;
      const clipped = parent !== null && parent !== document.body && (clips.get(parent) ?? false);
      clips.set(el, clipped || getComputedStyle(el).overflowX !== 'visible');
      const box = el.getBoundingClientRect();
      if (box.width === 0 || box.height === 0) continue;
      if (clipped) continue;
      if (box.left < -0.5 || box.right > width + 0.5) {
        outside.push(`${el.tagName.toLowerCase()}.${[...el.classList].join('.')} [${Math.round(box.left)}, ${Math.round(box.right)}] "${(el.textContent ?? '').slice(0, 30)}"`);
      }
    }
    return { scrollWidth: document.documentElement.scrollWidth, outside: outside.slice(0, 8) };
  }, viewport.width);
}

/** The control is inside the viewport horizontally and a tap would reach it (nothing covers it). */
async function assertTappable(control: Locator, viewport: Viewport, what: string) {
  await control.scrollIntoViewIfNeeded();
  const box = await control.boundingBox();
  assert.ok(box, `${what} is shown`);
  assert.ok(box.x >= -0.5 && box.x + box.width <= viewport.width + 0.5, `${what} lies within the ${viewport.width} px viewport (x ${Math.round(box.x)} to ${Math.round(box.x + box.width)})`);
  await control.click({ trial: true, timeout: 5_000 });
}

async function assertCollapsedNav(page: Page, viewport: Viewport) {
  const nav = page.getByRole('navigation', { name: 'Main' });
  const box = await nav.boundingBox();
  assert.ok(box && box.height <= HEADER_MAX_PX, `the collapsed navigation is a header of at most ${HEADER_MAX_PX} px (it is ${box?.height} px)`);
  assert.equal(await nav.getByRole('link', { name: 'Webhooks' }).isVisible(), false, 'the links wait behind the menu button');
  await assertTappable(page.getByRole('button', { name: 'Menu' }), viewport, 'the menu button');
}

describe('dashboard at phone width', () => {
  const env = relayAndBrowser();
  let messageId: string;
  let emailId: string;
  // A webhook endpoint answering 500, so the deliveries list has attempts to show.
  const endpoint = http.createServer((req, res) => req.resume().on('end', () => res.writeHead(500).end('nope')));
  after(() => new Promise<void>((resolve) => endpoint.close(() => resolve())));

  before(async () => {
    const { t } = env;
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    const hookUrl = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/raven/events/with/a/rather/long/path`;
    const hook = await t.admin('POST', `/admin/v1/projects/${t.projectId}/webhooks`, { url: hookUrl, events: ['*'] });
    assert.equal(hook.status, 201, hook.text);
    const sent = await t.send({
      from: `Grace Hopper with a rather long display name <grace.hopper.long.address@${t.domain}>`,
      to: `someone.with.a.very.long.mailbox.name@${t.domain}`,
      subject: 'Quarterly figures for the board, with a subject long enough to wrap on a phone',
      html: '<h1>Hello</h1><p>An HTML body that the preview shows at desktop, tablet and phone widths.</p>',
      tags: { kind: 'welcome' },
    });
    assert.equal(sent.status, 202, sent.text);
    emailId = sent.body.id;
    await t.waitForFinal(emailId);
    // The inbox indexes a capture after it commits: wait until search finds it.
    let found: string | undefined;
    while (!(found = (await t.admin('GET', '/admin/v1/inbox?q=subject:quarterly')).body.messages[0]?.id)) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    messageId = found;
    const key = await t.admin('POST', `/admin/v1/projects/${t.projectId}/keys`, { name: 'billing-service-production-eu-west', permission: 'email:send' });
    assert.equal(key.status, 201, key.text);
    const suppressed = await t.admin('POST', `/admin/v1/workspaces/${t.workspaceId}/suppressions`, { email: 'a.rather.long.address.that.bounced@example.net', reason: 'manual' });
    assert.equal(suppressed.status, 201, suppressed.text);
  });

  /** Each page: its route, what shows it is loaded, and the controls that must be on screen. */
  const pages = (): Array<{ name: string; hash: string; ready: string; controls?: (page: Page) => Array<[string, Locator]> }> => [
    {
      name: 'inbox',
      hash: '#/inbox',
      ready: '.message-row',
      controls: (page) => [
        ['the inbox time', page.locator('.message-row time').first()],
        ['the inbox size', page.locator('.message-row .size').first()],
        ['the search box', page.getByLabel('Search captured mail')],
      ],
    },
    {
      name: 'message',
      hash: `#/inbox/${messageId}`,
      ready: 'iframe',
      controls: (page) => ['desktop', 'tablet', 'phone'].map((w) => [`the ${w} preview button`, page.getByRole('group', { name: 'Preview width' }).getByRole('button', { name: w })]),
    },
    { name: 'email-log', hash: '#/emails', ready: 'td a', controls: (page) => [['the email link', page.locator('td a').first()]] },
    { name: 'email', hash: `#/emails/${emailId}`, ready: '.timeline li' },
    { name: 'workspaces', hash: '#/workspaces', ready: 'td code', controls: (page) => [['Create workspace', page.getByRole('button', { name: 'Create workspace' })]] },
    { name: 'domains', hash: '#/domains', ready: '.records', controls: (page) => [['Copy value', page.getByRole('button', { name: 'Copy value' }).first()]] },
    {
      name: 'keys',
      hash: '#/keys',
      ready: 'td code',
      controls: (page) => [
        ['the first Revoke button', page.getByRole('button', { name: 'Revoke' }).first()],
        ['the last Revoke button', page.getByRole('button', { name: 'Revoke' }).last()],
        ['Create key', page.getByRole('button', { name: 'Create key' })],
      ],
    },
    { name: 'webhooks', hash: '#/webhooks', ready: '[data-webhook]', controls: (page) => [['Deliveries', page.getByRole('button', { name: 'Deliveries' })]] },
    { name: 'suppressions', hash: '#/suppressions', ready: '[data-suppression]', controls: (page) => [['Remove', page.getByRole('button', { name: 'Remove' })]] },
    { name: 'usage', hash: '#/usage', ready: 'svg.chart' },
    { name: 'clock', hash: '#/clock', ready: 'h1' },
  ];

  it('fits every page into 360 and 390 px: nothing scrolls sideways, the nav is a small header, pickers and key controls on screen', async () => {
    // One phone context (touch, 2x) signed in once: each pass sets its viewport and scheme.
    const { context, page } = await newPage(env.b, 'light', PHONES[0]!);
    await signIn(page, env.t);
    for (const viewport of PHONES) {
      for (const scheme of ['light', 'dark'] as const) {
        await page.setViewportSize(viewport);
        await page.emulateMedia({ colorScheme: scheme });
        for (const { name, hash, ready, controls } of pages()) {
          await page.goto(`${env.t.directUrl}/${hash}`);
          await page.locator(ready).first().waitFor();
          await page.locator('select[aria-label="Project"] option').first().waitFor({ state: 'attached' });
          // A whole-page screenshot of every page at 360 px in each scheme (390 px looks the same, 30 px wider).
          if (viewport === PHONES[0]) await screenshot(page, `phone-${viewport.width}-${name}`, { fullPage: true });
          const where = `${name} at ${viewport.width}x${viewport.height} (${scheme})`;
          const found = await overflow(page, viewport);
          assert.ok(found.scrollWidth <= viewport.width, `${where}: the page is ${found.scrollWidth} px wide`);
          assert.deepEqual(found.outside, [], `${where}: elements cross the viewport's edge`);
          await assertCollapsedNav(page, viewport);
          await assertTappable(page.getByLabel('Workspace', { exact: true }), viewport, `${where}: the workspace picker`);
          await assertTappable(page.getByLabel('Project', { exact: true }), viewport, `${where}: the project picker`);
          for (const [what, control] of controls?.(page) ?? []) await assertTappable(control, viewport, `${where}: ${what}`);
        }
      }
    }
    await context.close();
  });

  it('fits every page into a tablet, upright (834 px) and on its side (1024 px): a long address no longer widens the email log past the screen, the pickers stay off the left edge', async () => {
    const tablets = [
      { width: 834, height: 1194 },
      { width: 1024, height: 768 },
    ];
    const { context, page } = await newPage(env.b, 'light', tablets[0]!);
    await signIn(page, env.t);
    for (const viewport of tablets) {
      await page.setViewportSize(viewport);
      for (const { name, hash, ready } of pages()) {
        await page.goto(`${env.t.directUrl}/${hash}`);
        await page.locator(ready).first().waitFor();
        await page.locator('select[aria-label="Project"] option').first().waitFor({ state: 'attached' });
        const where = `${name} at ${viewport.width}x${viewport.height}`;
        const found = await overflow(page, viewport);
        assert.ok(found.scrollWidth <= viewport.width, `${where}: the page is ${found.scrollWidth} px wide`);
        assert.deepEqual(found.outside, [], `${where}: elements cross the viewport's edge`);
        await assertTappable(page.getByLabel('Workspace', { exact: true }), viewport, `${where}: the workspace picker`);
      }
      await screenshot(page, `tablet-${viewport.width}-usage`);
    }
    await context.close();
  });

  it('opens the navigation from the menu button at phone width, and a link closes it', async () => {
    const viewport = PHONES[0]!;
    const { context, page } = await newPage(env.b, 'light', viewport);
    await signIn(page, env.t);
    const menu = page.getByRole('button', { name: 'Menu' });
    assert.equal(await menu.getAttribute('aria-expanded'), 'false');
    await menu.click();
    assert.equal(await menu.getAttribute('aria-expanded'), 'true');
    const nav = page.getByRole('navigation', { name: 'Main' });
    await assertTappable(nav.getByRole('link', { name: 'Test clock' }), viewport, 'the last link');
    await assertTappable(nav.getByRole('button', { name: 'Sign out' }), viewport, 'sign out');
    await screenshot(page, `phone-${viewport.width}-menu`);
    await nav.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    assert.equal(await menu.getAttribute('aria-expanded'), 'false');
    await assertCollapsedNav(page, viewport);
    // Escape closes it too.
    await menu.click();
    await nav.getByRole('link', { name: 'Usage' }).waitFor();
    await page.keyboard.press('Escape');
    await nav.getByRole('link', { name: 'Usage' }).waitFor({ state: 'hidden' });
    await context.close();
  });

  it('keeps the sign-in form, the dialogs and the webhook deliveries on screen at phone width', async () => {
    const viewport = PHONES[0]!;
    const { context, page } = await newPage(env.b, 'dark', viewport);
    const fits = async (where: string) => {
      const found = await overflow(page, viewport);
      assert.ok(found.scrollWidth <= viewport.width, `${where}: the page is ${found.scrollWidth} px wide`);
      assert.deepEqual(found.outside, [], `${where}: elements cross the viewport's edge`);
    };
    await page.goto(`${env.t.directUrl}/`);
    await page.locator('#admin-token').waitFor();
    await fits('sign-in');
    await screenshot(page, `phone-${viewport.width}-sign-in`);
    await signIn(page, env.t);

    await page.goto(`${env.t.directUrl}/#/keys`);
    await page.getByLabel('Key name').fill('a key made on a phone');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByTestId('secret').waitFor();
    await fits('the new key dialog');
    await assertTappable(page.getByRole('dialog').getByRole('button', { name: /^Copy/ }), viewport, 'Copy in the new key dialog');
    await screenshot(page, `phone-${viewport.width}-key-created`);
    await page.getByRole('button', { name: 'Done' }).click();
    await page.locator('tr', { hasText: 'a key made on a phone' }).getByRole('button', { name: 'Revoke' }).click();
    await fits('the revoke dialog');
    await assertTappable(page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }), viewport, 'Revoke key in the dialog');
    await assertTappable(page.getByRole('dialog').getByRole('button', { name: 'Cancel' }), viewport, 'Cancel in the dialog');
    await screenshot(page, `phone-${viewport.width}-revoke`);
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();

    await page.goto(`${env.t.directUrl}/#/webhooks`);
    await page.getByRole('button', { name: 'Deliveries' }).click();
    // The first attempt is recorded a moment after the email: refresh until it shows.
    const deadline = Date.now() + 15_000;
    while ((await page.locator('td.status-code').count()) === 0) {
      assert.ok(Date.now() < deadline, 'the deliveries list shows the failed attempt');
      await page.getByRole('button', { name: 'Refresh' }).click();
      await page.waitForTimeout(200);
    }
    await assertTappable(page.getByRole('button', { name: 'Resend now' }).first(), viewport, 'Resend now');
    await fits('the webhook deliveries');
    await screenshot(page, `phone-${viewport.width}-deliveries`, { fullPage: true });
    await context.close();
  });

  it('switches the message preview to phone width from the buttons at phone width', async () => {
    const viewport = PHONES[1]!;
    const { context, page } = await newPage(env.b, 'light', viewport);
    await signIn(page, env.t);
    await page.goto(`${env.t.directUrl}/#/inbox/${messageId}`);
    const widths = page.getByRole('group', { name: 'Preview width' });
    await widths.getByRole('button', { name: 'tablet' }).click();
    await widths.getByRole('button', { name: 'phone' }).click();
    assert.match((await widths.getByRole('button', { name: 'phone' }).getAttribute('class')) ?? '', /active/);
    const frame = await page.locator('iframe').boundingBox();
    assert.ok(frame && frame.x >= 0 && frame.x + frame.width <= viewport.width, 'the preview stays on screen');
    await context.close();
  });

  type Box = { left: number; right: number; top: number; bottom: number; text: string };
  /** The usage page at each size and scheme: the chart's box, its labels' boxes, its card's inner width. */
  const USAGE_VIEWS = [
    [DESKTOP, 'light'],
    [DESKTOP, 'dark'],
    [PHONES[0]!, 'light'],
    [PHONES[1]!, 'dark'],
  ] as const;
  type UsageView = { page: Page; geometry: { chart: Box; labels: Box[]; inner: number }; where: string };
  /** The four usage pages, opened once (by the first test that wants them) for the three tests that
   * check them: one desktop and one phone context, signed in once each, a page a size and scheme. */
  let usageViews: Promise<UsageView[]> | undefined;
  const usageContexts: BrowserContext[] = [];
  after(() => Promise.all(usageContexts.map((context) => context.close())));
  function openUsageViews(): Promise<UsageView[]> {
    usageViews ??= (async () => {
      const views: UsageView[] = [];
      const contexts = new Map<boolean, BrowserContext>();
      for (const [viewport, scheme] of USAGE_VIEWS) {
        const phone = viewport.width < 600;
        let context = contexts.get(phone);
        let page: Page;
        if (context) {
          page = await context.newPage();
          await page.setViewportSize(viewport);
          await page.emulateMedia({ colorScheme: scheme });
        } else {
          ({ context, page } = await newPage(env.b, scheme, viewport));
          contexts.set(phone, context);
          usageContexts.push(context);
          await signIn(page, env.t);
        }
        await page.goto(`${env.t.directUrl}/#/usage`);
        await page.locator('svg.chart text').first().waitFor();
        const geometry = await page.evaluate(() => {
          const svg = document.querySelector('svg.chart')!;
          const card = svg.parentElement!;
          const padding = parseFloat(getComputedStyle(card).paddingLeft) + parseFloat(getComputedStyle(card).paddingRight);
          const boxes: Array<{ left: number; right: number; top: number; bottom: number; text: string }> = [];
          for (const el of [svg, ...svg.querySelectorAll('text')]) {
            const r = el.getBoundingClientRect();
            boxes.push({ left: r.left, right: r.right, top: r.top, bottom: r.bottom, text: el.textContent ?? '' });
          }
          return { inner: card.clientWidth - padding, chart: boxes[0]!, labels: boxes.slice(1) };
        });
        await screenshot(page, `usage-${viewport.width}`);
        views.push({ page, geometry, where: `at ${viewport.width} px (${scheme})` });
      }
      return views;
    })();
    return usageViews;
  }
  async function eachUsagePage(check: (page: Page, geometry: { chart: Box; labels: Box[]; inner: number }, where: string) => Promise<void>) {
    for (const { page, geometry, where } of await openUsageViews()) await check(page, geometry, where);
  }

  it('draws the usage chart axis labels within the chart, none over another (".0-27", "11-24" over "11-25")', async () => {
    await eachUsagePage(async (_page, { chart, labels }, where) => {
      assert.ok(labels.length >= 2, `${where}: the chart has axis labels`);
      for (const label of labels) {
        assert.ok(
          label.left >= chart.left - 0.5 && label.right <= chart.right + 0.5 && label.top >= chart.top - 0.5 && label.bottom <= chart.bottom + 0.5,
          `${where}: "${label.text}" lies within the chart`,
        );
      }
      for (let i = 0; i < labels.length; i++) {
        for (let j = i + 1; j < labels.length; j++) {
          const [a, b] = [labels[i]!, labels[j]!];
          assert.ok(a.right <= b.left || b.right <= a.left || a.bottom <= b.top || b.bottom <= a.top, `${where}: "${a.text}" and "${b.text}" overlap`);
        }
      }
    });
  });

  it('draws the usage chart across the whole width of its card (it filled 60 %)', async () => {
    await eachUsagePage(async (_page, { chart, inner }, where) => {
      assert.ok(chart.right - chart.left >= inner * 0.98, `${where}: the chart is ${Math.round(chart.right - chart.left)} of ${Math.round(inner)} px`);
    });
  });

  it('lists the keys on the usage page by name, not by id', async () => {
    const keys = (await env.t.admin('GET', `/admin/v1/projects/${env.t.projectId}/keys`)).body.keys as Array<{ id: string; name: string }>;
    assert.ok(keys.length >= 2);
    await eachUsagePage(async (page) => {
      for (const key of keys) await page.locator(`[data-usage-key="${key.id}"]`).getByText(key.name, { exact: true }).waitFor();
    });
  });

  it('shows the unread badge on a fresh load of a page other than the inbox', async () => {
    const sent = await env.t.send({ subject: 'Still unread' });
    assert.equal(sent.status, 202, sent.text);
    let unread = 0;
    while ((unread = (await env.t.admin('GET', '/admin/v1/inbox?q=is:unread')).body.unread as number) === 0) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    for (const viewport of [DESKTOP, PHONES[0]!]) {
      const { context, page } = await newPage(env.b, 'light', viewport);
      await signIn(page, env.t);
      await page.goto(`${env.t.directUrl}/#/keys`);
      await page.reload();
      await page.getByRole('heading', { name: 'API keys' }).waitFor();
      if (viewport === DESKTOP) {
        await page.getByTestId('inbox-count').filter({ hasText: String(unread) }).waitFor();
      } else {
        // Collapsed: the menu button carries the count, and the Inbox link inside it.
        await page.getByTestId('menu-count').filter({ hasText: String(unread) }).waitFor();
        await page.getByRole('button', { name: 'Menu' }).click();
        await page.getByTestId('inbox-count').filter({ hasText: String(unread) }).waitFor();
      }
      await context.close();
    }
  });
});
