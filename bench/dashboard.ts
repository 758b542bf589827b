/// <reference lib="dom" />
// The dashboard's figures (issue 12), a section of `npm run bench` (BENCH_ONLY=dashboard):
//   1. the inbox's first page and searches with 100,000 captured messages, p50/p99;
//   2. from SMTP capture (the sink's 250) to the message's row in an open inbox in Chromium;
//   3. relay RSS with 100,000 captured messages and two open dashboards.
// Knobs: BENCH_DASHBOARD_MESSAGES (100000), BENCH_DASHBOARD_SAMPLES (300), BENCH_DASHBOARD_LIVE (200),
// BENCH_DASHBOARD_LIVE_GAP_MS (50: the pause between two live messages).
import { execFileSync, fork } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import nodemailer from 'nodemailer';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const MESSAGES = Number(process.env.BENCH_DASHBOARD_MESSAGES ?? 100_000);
const SAMPLES = Number(process.env.BENCH_DASHBOARD_SAMPLES ?? 300);
const LIVE = Number(process.env.BENCH_DASHBOARD_LIVE ?? 200);
const LIVE_GAP_MS = Number(process.env.BENCH_DASHBOARD_LIVE_GAP_MS ?? 50);
const CHROMIUM = process.env.RAVEN_CHROMIUM ?? '/usr/bin/chromium';

const mb = (b: number) => `${(b / 1024 / 1024).toFixed(0)} MB`;
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
export const figures = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return `p50 ${pct(sorted, 50).toFixed(1).padStart(6)} ms  p99 ${pct(sorted, 99).toFixed(1).padStart(6)} ms  max ${sorted[sorted.length - 1]!.toFixed(1).padStart(6)} ms`;
};

export interface Target {
  url: string;
  smtpPort: number;
  adminToken: string;
  fillMs: number;
  /** The CPU time the target process spent filling. */
  fillCpuMs: number;
  ask<T>(cmd: 'memory' | 'cpu' | 'stop' | 'grams', args?: Record<string, unknown>): Promise<T>;
}

/** The relay with `messages` captured messages (bench/dashboard-target.ts), on SQLite in `dir` or on `database`. */
export async function startTarget(dir: string, options: { messages?: number; database?: string } = {}): Promise<Target> {
  const args = [dir, String(options.messages ?? MESSAGES), ...(options.database ? [options.database] : [])];
  const child = fork(path.join(here, 'dashboard-target.ts'), args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const info = await new Promise<Omit<Target, 'ask'>>((resolve, reject) => {
    child.once('message', (m) => resolve(m as Omit<Target, 'ask'>));
    child.once('exit', (code) => reject(new Error(`dashboard target exited ${code}`)));
  });
  return {
    ...info,
    ask: (cmd, args = {}) =>
      new Promise((resolve) => {
        child.once('message', (m) => resolve(m as never));
        child.send({ ...args, cmd });
      }),
  };
}

async function bundleSize(): Promise<string> {
  const assets = path.join(root, 'dist', 'web', 'assets');
  let js = 0;
  for (const name of (await readdir(assets)).filter((n) => n.endsWith('.js'))) js += gzipSync(await readFile(path.join(assets, name)), { level: 9 }).length;
  return `${(js / 1024).toFixed(1)} KB`;
}

async function inboxReads(t: Target): Promise<void> {
  const cases: Array<[string, string]> = [
    ['first page (50)', ''],
    ['from:billing (a quarter match)', 'from:billing'],
    ['is:unread', 'is:unread'],
    ['free text "order 4242" (rare)', 'order 4242.'],
    ['subject:"receipt #7 " (rare)', 'subject:"receipt #7 "'],
    ['no match at all', 'no-such-text'],
    ['a two-letter term (under the trigram index: a scan)', 'zq'],
  ];
  const headers = { authorization: `Bearer ${t.adminToken}` };
  for (const [name, q] of cases) {
    const times: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const started = performance.now();
      const res = await fetch(`${t.url}/admin/v1/inbox${q ? `?q=${encodeURIComponent(q)}` : ''}`, { headers });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`inbox answered ${res.status}`);
      times.push(performance.now() - started);
    }
    console.log(`  ${name.padEnd(44)} ${figures(times)}`);
  }
}

/** Two signed-in inboxes in Chromium; LIVE messages over SMTP, timed from the sink's 250 to the row. */
async function liveInbox(t: Target): Promise<{ latencies: number[]; memory: { rss: number }; closeAll(): Promise<void> }> {
  execFileSync(process.execPath, [path.join(root, 'scripts', 'ensure-chromium.mjs')], { stdio: 'inherit' });
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
  const signIn = await fetch(`${t.url}/admin/v1/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: t.adminToken }) });
  const cookie = /raven_session=([^;]+)/.exec(signIn.headers.get('set-cookie') ?? '')![1]!;
  const pages = [];
  for (let i = 0; i < 2; i++) {
    const context = await browser.newContext();
    await context.addCookies([{ name: 'raven_session', value: cookie, url: t.url }]);
    const page = await context.newPage();
    await page.goto(`${t.url}/#/inbox`);
    await page.locator('.message-row').first().waitFor();
    // Record when each new row appears (Date.now() here and in the bench read the same clock).
    await page.evaluate(() => {
      const seen: Record<string, number> = {};
      (window as unknown as { seen: typeof seen }).seen = seen;
      new MutationObserver(() => {
        for (const el of Array.from(document.querySelectorAll('.message-row .subject'))) {
          const s = el.textContent ?? '';
          if (s.startsWith('live ') && !(s in seen)) seen[s] = Date.now();
        }
      }).observe(document.querySelector('.message-list')!, { childList: true });
    });
    pages.push(page);
  }
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: t.smtpPort, ignoreTLS: true, pool: false });
  const accepted: Record<string, number> = {};
  for (let i = 0; i < LIVE; i++) {
    const subject = `live ${i}`;
    await transport.sendMail({ from: 'live@bench.test', to: 'inbox@bench.test', subject, text: 'watching the inbox' });
    accepted[subject] = Date.now();
    // A steady trickle (an application sending mail), not a flood: this times visibility, not throughput.
    await new Promise((r) => setTimeout(r, LIVE_GAP_MS));
  }
  const page = pages[0]!;
  await page.waitForFunction((n) => Object.keys((window as unknown as { seen: object }).seen).length >= n, LIVE, { timeout: 60_000 });
  const seen = await page.evaluate(() => (window as unknown as { seen: Record<string, number> }).seen);
  const memory = await t.ask<{ rss: number }>('memory');
  transport.close();
  return {
    latencies: Object.entries(accepted).map(([subject, at]) => seen[subject]! - at),
    memory,
    closeAll: () => browser.close(),
  };
}

export async function dashboardBench(): Promise<void> {
  console.log(`\ndashboard: ${MESSAGES} captured messages written straight into the relay's tables; the front end's JS ${await bundleSize()} gzipped`);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'raven-bench-dashboard-'));
  try {
    const t = await startTarget(dir);
    console.log(`  (filled in ${(t.fillMs / 1000).toFixed(1)} s; ${SAMPLES} sequential GETs per line, round trip on loopback: an upper bound on server time)`);
    const idle = await t.ask<{ rss: number }>('memory');
    await inboxReads(t);
    const live = await liveInbox(t);
    console.log(`  SMTP capture (the sink's 250) -> row in an open inbox, ${LIVE} messages ${LIVE_GAP_MS} ms apart: ${figures(live.latencies)}`);
    console.log(`  relay RSS with ${MESSAGES} captured: idle ${mb(idle.rss)}, with two open dashboards after the live run ${mb(live.memory.rss)}`);
    await live.closeAll();
    await t.ask('stop');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await dashboardBench();
