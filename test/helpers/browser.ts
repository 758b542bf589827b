/// <reference lib="dom" />
// (page.evaluate callbacks run in the browser)
// Debian's chromium (installed by `npm test`'s pretest: scripts/ensure-chromium.mjs) driven by
// playwright-core, headless. A missing browser fails the test; it is never skipped.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { after, before } from 'node:test';
import { ADMIN_TOKEN, startTestRelay, type TestRelay, type TestRelayOptions } from './start-relay.js';

export const CHROMIUM = process.env.RAVEN_CHROMIUM ?? '/usr/bin/chromium';
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/screenshots/', import.meta.url));

export interface TestBrowser {
  browser: Browser;
  /** Where downloads land; removed by close(). */
  downloadsDir: string;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<TestBrowser> {
  const downloadsDir = await mkdtemp(path.join(tmpdir(), 'raven-downloads-'));
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    downloadsPath: downloadsDir,
    // Root (CI) cannot use chromium's user-namespace sandbox.
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
  });
  return {
    browser,
    downloadsDir,
    async close() {
      await browser.close();
      await rm(downloadsDir, { recursive: true, force: true });
    },
  };
}

export const DESKTOP = { width: 1280, height: 800 };

export async function newPage(
  b: TestBrowser,
  colorScheme: 'light' | 'dark' = 'light',
  viewport: { width: number; height: number } = DESKTOP,
): Promise<{ context: BrowserContext; page: Page }> {
  // A phone-sized viewport is a touch screen too (hover never fires, taps do).
  const phone = viewport.width < 600;
  const context = await b.browser.newContext({ colorScheme, viewport, acceptDownloads: true, hasTouch: phone, isMobile: phone, deviceScaleFactor: phone ? 2 : 1 });
  const page = await context.newPage();
  return { context, page };
}

/** Opens the dashboard and signs in with the admin token through the form. */
export async function signIn(page: Page, t: TestRelay): Promise<void> {
  await page.goto(t.directUrl + '/');
  await page.locator('#admin-token').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
}

/** Clicks a refresh control until `done` holds: the dashboard shows what the relay wrote since. */
export async function refreshUntil(page: Page, refresh: () => Promise<void>, done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error('the dashboard never showed it');
    await refresh();
    await page.waitForLoadState('networkidle');
  }
}

/** A screenshot kept as a test artifact (test-artifacts/screenshots/, not committed). */
export async function screenshot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<void> {
  await mkdir(ARTIFACTS, { recursive: true });
  const scheme = await page.evaluate(() => (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'));
  // A whole page from its top: scrolled, a sticky header would be drawn halfway down.
  if (options.fullPage) await page.evaluate(() => scrollTo(0, 0));
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}-${scheme}.png`), fullPage: options.fullPage ?? false });
}

/** One browser for every describe() of a file that calls relayAndBrowser (operations.test.ts has
 * two): launched by the first, closed after the file's last test (a hook on the file's root test,
 * registered when this module loads; it does nothing where no browser was launched). */
let shared: Promise<TestBrowser> | undefined;
after(async () => {
  await (await shared?.catch(() => undefined))?.close();
});

/** A relay for the tests of one describe(), started before and stopped after them, and the file's browser. */
export function relayAndBrowser(options?: TestRelayOptions): { t: TestRelay; b: TestBrowser } {
  const env = {} as { t: TestRelay; b: TestBrowser };
  before(async () => {
    [env.t, env.b] = await Promise.all([startTestRelay(options), (shared ??= launchBrowser())]);
  });
  after(async () => {
    await env.t?.stop();
  });
  return env;
}
