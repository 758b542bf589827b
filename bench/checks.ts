// The checks' figures (issue 26), a section of `npm run bench` (BENCH_ONLY=checks):
// 1. GET /admin/v1/messages/{id}/checks?links=0 of a typical 50 KB HTML message the relay signed
//    and delivered (authentication, headers, HTML compatibility; no links, no spamd): p50/p99 over
//    BENCH_CHECKS_SAMPLES (200) requests one after another, beside the 200 ms target.
// 2. Capture throughput of the sink with the checks enabled as a user has them, beside capture
//    without, in interleaved rounds (BENCH_CHECKS_ROUNDS, 3) of the same run, each on a fresh relay.
//    Issue 26's "capture throughput unchanged with the checks enabled (they run on demand or in the
//    background)": the checks are on demand (GET .../checks) and the inbox's badges are computed in
//    the background; "enabled" is a dashboard open on the inbox while mail streams in (an inbox
//    page every DASHBOARD_EVERY_MS, each queueing the badges of its newest 50 messages), opened
//    before the mail comes (its first page's badges computed, which starts the checks' thread: a
//    one-time cost of a relay, not of capture), and the badges must still come (the bench waits
//    for the newest page's badges after the capture).
//    The target (>= 95 % of without) is judged on that. A third figure, labelled, is the old one:
//    a client requesting checks back to back throughout (a core's worth of on-demand work the user
//    asked for; what it takes from capture on 2 cores is the CPU it uses, not a design choice).
// The relay runs in its own process (bench/target.ts), as in the sink section.
import os from 'node:os';
import type { ChildProcess } from 'node:child_process';
import { settled } from './process-cpu.js';
import { typicalHtml } from './typical-html.js';

const SAMPLES = Number(process.env.BENCH_CHECKS_SAMPLES ?? 200);
const WARM_UP = 10;
const TARGET_P99_MS = 200;
const ROUNDS = Number(process.env.BENCH_CHECKS_ROUNDS ?? 3);
const DASHBOARD_EVERY_MS = 1_000;
const TARGET_CAPTURE_RATIO = 0.95;

interface RelayTarget {
  url: string;
  apiKey: string;
  domain: string;
  adminToken: string;
  smtpPort: number;
  child: ChildProcess;
}

/** What bench/run.ts lends: its target processes and its SMTP load. */
export interface ChecksBenchTools {
  startRelay(): Promise<RelayTarget>;
  stopRelay(t: RelayTarget): Promise<unknown>;
  smtpLoad(port: number, n: number, recipients: number): Promise<{ perSec: number; p50: number; p99: number; failed: number }>;
  sinkN: number;
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const loadNow = () => `load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`;

async function admin(t: RelayTarget, urlPath: string): Promise<{ status: number; body: any }> {
  const res = await fetch(t.url + urlPath, { headers: { authorization: `Bearer ${t.adminToken}` } });
  return { status: res.status, body: await res.json() };
}

/** Sends the typical message through the API and answers its captured id once the sink has it. */
async function typicalMessage(t: RelayTarget): Promise<string> {
  const to = `checks@${t.domain}`;
  const html = typicalHtml();
  const res = await fetch(`${t.url}/v1/emails`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ from: `Shop <orders@${t.domain}>`, to, subject: 'Your order', html, text: 'Thank you for your order. View it at https://shop.example.test/orders/48291' }),
  });
  if (res.status !== 202) throw new Error(`send answered ${res.status}: ${await res.text()}`);
  const waited = await admin(t, `/admin/v1/messages/wait?to=${encodeURIComponent(to)}&timeout=60`);
  if (waited.status !== 200) throw new Error(`wait answered ${waited.status}`);
  return waited.body.id as string;
}

/** Lists the inbox until its newest page has every badge (60 s at most); says how many came and when. */
async function badgesOfNewestPage(t: RelayTarget): Promise<string> {
  const start = performance.now();
  for (;;) {
    const page = await admin(t, '/admin/v1/inbox');
    const messages = page.body.messages as Array<{ checks: unknown }>;
    const done = messages.filter((m) => m.checks !== null).length;
    if (done === messages.length || performance.now() - start > 60_000) {
      return `the newest page's badges ${done}/${messages.length} computed ${((performance.now() - start) / 1000).toFixed(1)} s`;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function checksBench(tools: ChecksBenchTools): Promise<void> {
  console.log(`\nchecks of captured mail (${loadNow()})`);
  const t = await tools.startRelay();
  try {
    const id = await typicalMessage(t);
    const first = await admin(t, `/admin/v1/messages/${id}/checks?links=0`);
    if (first.status !== 200 || first.body.authentication.dkim[0]?.result !== 'pass') throw new Error(`checks answered ${first.status}: ${JSON.stringify(first.body).slice(0, 300)}`);
    for (let i = 0; i < WARM_UP; i++) await admin(t, `/admin/v1/messages/${id}/checks?links=0`);
    const latencies: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const start = performance.now();
      const answer = await admin(t, `/admin/v1/messages/${id}/checks?links=0`);
      latencies.push(performance.now() - start);
      if (answer.status !== 200) throw new Error(`checks answered ${answer.status}`);
    }
    const sorted = latencies.sort((a, b) => a - b);
    console.log(
      `  checks of a ${(typicalHtml().length / 1024).toFixed(0)} KB HTML message (all but links and spam; HTML score ${first.body.html.score} %, ${first.body.html.features.length} features)  ` +
        `p50 ${pct(sorted, 50).toFixed(0)} ms  p99 ${pct(sorted, 99).toFixed(0)} ms  max ${sorted[sorted.length - 1]!.toFixed(0)} ms  (target p99 < ${TARGET_P99_MS} ms; ${loadNow()})`,
    );
  } finally {
    await tools.stopRelay(t);
  }

  type Mode = 'without' | 'dashboard' | 'back to back';
  const capture = async (mode: Mode) => {
    const relay = await tools.startRelay();
    let requests = 0;
    let running = mode !== 'without';
    try {
      const id = await typicalMessage(relay);
      // The dashboard is open before the mail comes, as a user has it: its first page has its
      // badges (which starts the checks' thread once, a one-time cost outside the measure).
      if (mode === 'dashboard') await badgesOfNewestPage(relay);
      // Every mode starts from a settled relay: a thread started just now (the checks' one, here)
      // still compiles and collects its start-up garbage for a while after its first answer.
      await settled([relay.child.pid!]);
      const background = (async () => {
        while (running) {
          if (mode === 'dashboard') {
            const answer = await admin(relay, '/admin/v1/inbox');
            if (answer.status !== 200) throw new Error(`/admin/v1/inbox answered ${answer.status}`);
            requests += 1;
            await new Promise((resolve) => setTimeout(resolve, DASHBOARD_EVERY_MS));
            continue;
          }
          const path = requests % 20 === 19 ? '/admin/v1/inbox' : `/admin/v1/messages/${id}/checks?links=0`;
          const answer = await admin(relay, path);
          if (answer.status !== 200) throw new Error(`${path} answered ${answer.status}`);
          requests += 1;
        }
      })();
      const load = await tools.smtpLoad(relay.smtpPort, tools.sinkN, 3);
      running = false;
      await background;
      // The badges still come: the newest page's, once the sink is quiet.
      const badges = mode === 'dashboard' ? `; ${await badgesOfNewestPage(relay)} after the last 250` : '';
      const label = { without: 'without checks', dashboard: 'checks enabled, dashboard open', 'back to back': 'checks requested back to back (labelled)' }[mode];
      console.log(
        `  ${label.padEnd(42)} ${load.perSec.toFixed(0)} msgs/s  send p50 ${load.p50} ms  p99 ${load.p99} ms  failed ${load.failed}` +
          `${mode === 'without' ? '' : `  (${requests} ${mode === 'dashboard' ? 'inbox pages' : 'checks and inbox requests'} meanwhile${badges})`}  (${loadNow()})`,
      );
      return load.perSec;
    } finally {
      running = false;
      await tools.stopRelay(relay);
    }
  };
  console.log(`  capture: ${tools.sinkN} messages x 3 recipients into the sink, 20 concurrent senders, 8 connections; ${ROUNDS} interleaved rounds`);
  const sums: Record<Mode, number> = { without: 0, dashboard: 0, 'back to back': 0 };
  const ratios: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate which goes first, so a drift in the machine's load favours neither.
    const order: Mode[] = round % 2 === 0 ? ['without', 'dashboard', 'back to back'] : ['dashboard', 'without', 'back to back'];
    const figures = {} as Record<Mode, number>;
    for (const mode of order) figures[mode] = await capture(mode);
    for (const mode of order) sums[mode] += figures[mode];
    ratios.push(figures.dashboard / figures.without);
  }
  const ratio = sums.dashboard / sums.without;
  console.log(
    `  checks enabled (dashboard open) / without: ${(ratio * 100).toFixed(0)} % over ${ROUNDS} rounds (per round ${ratios.map((r) => `${(r * 100).toFixed(0)} %`).join(', ')})` +
      `   (target >= ${TARGET_CAPTURE_RATIO * 100} %; ${loadNow()})`,
  );
  console.log(`  checks requested back to back / without: ${((sums['back to back'] / sums.without) * 100).toFixed(0)} %   (labelled: not the issue's definition; ${loadNow()})`);
}
