// Raven benchmarks: prints figures, never asserts. `npm run bench`; the knobs are BENCH_* variables
// (BENCHMARKS.md), BENCH_ONLY=admission,e2e,sustained,sink,submission,cli,reads,sdk,dashboard,search,wait,checks,postgres picks sections (reads1m is opt-in).
import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import nodemailer from 'nodemailer';
import { SMTPServer } from 'smtp-server';
import type { Bootstrap } from '../relay/domain/first-run.js';
import { openDatabase } from '../relay/storage/db.js';
import { fillEmails } from './fill.js';
import { benchPostgres } from './postgres.js';
import { sdkInstall } from './sdk-install.js';
import { dashboardBench } from './dashboard.js';
import { waitBench } from './inbox-wait.js';
import { checksBench } from './checks.js';
import { searchBench } from './inbox-search.js';
import { cpuSeconds, settled, threadCpuSeconds } from './process-cpu.js';
import { composeBlast, smtpBlast, type BlastMessage } from './smtp-blast.js';
import { EmailPoster } from './email-poster.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
// End to end: emails per round, and rounds (the relay then the SMTP ceiling in each).
const E2E_N = Number(process.env.BENCH_E2E_N ?? 2_000);
const E2E_ROUNDS = Number(process.env.BENCH_E2E_ROUNDS ?? 2);
const CLI_RUNS = Number(process.env.BENCH_CLI_RUNS ?? 10);
const READS_EMAILS = Number(process.env.BENCH_READS_EMAILS ?? 100_000);
const READS_SAMPLES = Number(process.env.BENCH_READS_SAMPLES ?? 300);
const METRICS_SCRAPES = 20;
const SUSTAINED_RATE = Number(process.env.BENCH_SUSTAINED_RATE ?? 400);
const SUSTAINED_SECONDS = Number(process.env.BENCH_SUSTAINED_SECONDS ?? 60);
// Messages measured per sink target and round, split evenly over the connection counts.
const SINK_N = Number(process.env.BENCH_SINK_N ?? 3_000);
// Sent to each sink target first and not counted, as the end-to-end warm-up: the figures are a warmed
// server's, not its first compilations'. 3,000, not 500: after 500 the relay's threads other than
// the main one still spent 0.24 ms a message during intake (V8's background compiler in perf's
// samples), 0.13 ms after 3,000; with indexing, 1.18 against 1.05 ms a message in all (session 11).
const SINK_WARM_UP = Number(process.env.BENCH_SINK_WARM_UP ?? 3_000);
// Sink intake: rounds over the same warmed targets.
const SINK_ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
// The sink section's load generator: `blast` (raw sockets, PIPELINING; bench/smtp-blast.ts) or
// `nodemailer` (a pool, as the other SMTP sections use).
const SINK_CLIENT = process.env.BENCH_SINK_CLIENT ?? 'blast';
// The client connection counts every sink target is measured at, in turns (comma-separated). A
// server's intake capacity is its best over them: the relay's groups share an fsync among more
// messages with more connections, MailDev is CPU-bound at any; the same counts for all three
// targets, so the choice leans to none (session 11: one count alone gave 58 % at 32, 230 % at 64).
const SINK_CONNECTIONS = (process.env.BENCH_SINK_CONNECTIONS ?? '16,32,64').split(',').map(Number);
const CAPTURED_N = Number(process.env.BENCH_CAPTURED_N ?? 100_000);
const SUBMISSION_ROUNDS = Number(process.env.BENCH_SUBMISSION_ROUNDS ?? 3);
const SUBMISSION_N = Number(process.env.BENCH_SUBMISSION_N ?? 2_000);
// Admission: requests sent to each target before its measured window, not counted, as the end-to-end
// warm-up (E2E_WARM_UP) is a count of emails: a relay's first thousands of requests pay for its JIT's
// compilations (CPU per request 0.64 - 0.87 ms after one second of warm-up, 0.34 - 0.52 after five,
// load 15 - 18, BENCHMARKS.md), and a second of load was 400 requests on a loaded machine, 3,000 on
// a quiet one.
const ADMISSION_WARM_UP = Number(process.env.BENCH_ADMISSION_WARM_UP ?? 5_000);
// Admission: rounds of all targets in turn, BENCH_SECONDS split over them; before each window a
// target gets this much load again, not counted (a relay held between its windows must see the
// burst for a second before its worker yields to it again).
const ADMISSION_ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const ADMISSION_REWARM_SECONDS = Number(process.env.BENCH_ADMISSION_REWARM_SECONDS ?? 1.5);
const SECTIONS = new Set((process.env.BENCH_ONLY ?? 'admission,e2e,sustained,sink,submission,cli,reads,sdk,dashboard,search,wait,checks,postgres').split(',').map((x) => x.trim()));

const mb = (b: number) => `${(b / 1024 / 1024).toFixed(0)} MB`;
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const median = (xs: number[]) => pct([...xs].sort((a, b) => a - b), 50);
const loadNow = () => `load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`;

/**
 * The CPU a target's process and its main thread use, and this process's (the load generator). For
 * a relay (`runtimeThreads`: its threads before it started, bench/target.ts) also its worker
 * threads (relay/threads/: delivery and the inbox's parsing) and the runtime's other threads (V8's
 * compiler and garbage collector helpers, libuv's pool where SQLite's statements run).
 */
function targetCpu(name: string, pid: number | undefined, runtimeThreads: string[] = []): Record<string, string | string[]> {
  const cpu: Record<string, string | string[]> = { [name]: String(pid), [`${name} main thread`]: `${pid}/task/${pid}` };
  if (runtimeThreads.length > 0) {
    const thread = (tid: string) => `${pid}/task/${tid}`;
    cpu[`${name} worker threads`] = [...threadCpuSeconds(pid!).keys()].filter((tid) => !runtimeThreads.includes(tid)).map(thread);
    cpu[`${name} runtime threads`] = runtimeThreads.filter((tid) => tid !== String(pid)).map(thread);
  }
  return { ...cpu, 'bench client': 'self' };
}

/**
 * Measures the CPU of processes or threads over a stretch: the function it returns gives each one's
 * share of one core, and with `perItem` (emails handled meanwhile) also each one's CPU milliseconds
 * per item, the figure that survives a loaded machine.
 */
function cpuMeter(pids: Record<string, string | string[]>) {
  // A list of threads counts as their sum.
  const seconds = (proc: string | string[]) => (Array.isArray(proc) ? proc.reduce((sum, p) => sum + cpuSeconds(p), 0) : cpuSeconds(proc));
  const start = performance.now();
  const before = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, seconds(pid)]));
  return (perItem?: { n: number; unit: string }) => {
    const wall = (performance.now() - start) / 1000;
    const used = Object.entries(pids).map(([name, pid]) => [name, seconds(pid) - before[name]!] as const);
    const shares = used.map(([name, s]) => `${name} ${((s / wall) * 100).toFixed(0)}%`).join(', ');
    if (!perItem) return shares;
    const per = used.map(([name, s]) => `${name} ${((s * 1000) / perItem.n).toFixed(2)} ms`).join(', ');
    return `${shares}; CPU per ${perItem.unit}: ${per}`;
  };
}

// ---------- targets in child processes ----------
interface Target {
  url: string;
  apiKey: string;
  domain: string;
  projectId: string;
  adminToken: string;
  smtpPort: number;
  submissionPort: number;
  bootstrap: Bootstrap;
  child: ChildProcess;
  dir: string;
  /** A relay's threads before it started (bench/target.ts). */
  runtimeThreads?: string[];
}
interface Memory { rss: number; peakRss: number }

async function startTarget(kind: 'node' | 'sqlite' | 'smtp' | 'relay', env: Record<string, string> = {}): Promise<Target> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `raven-bench-${kind}-`));
  // BENCH_CPU_PROF=<dir>: each target writes a V8 CPU profile there when it stops.
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const child = fork(path.join(here, 'target.ts'), [kind, dir], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, ...env },
    execArgv: [...process.execArgv, ...profile],
  });
  const info: any = await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`target ${kind} exited ${code}`)));
  });
  if (kind === 'relay') await settled([child.pid!]);
  return { ...info, child, dir };
}

/** One request to the target process, one reply (see bench/target.ts). */
function ask<T>(t: { child: ChildProcess }, message: { cmd: 'memory' | 'stop' | 'indexed' }): Promise<T> {
  return new Promise((resolve) => {
    t.child.once('message', resolve);
    t.child.send(message);
  });
}

async function stopTarget(t: Target): Promise<Memory> {
  await poster.close(t.url);
  const memory = await ask<Memory>(t, { cmd: 'stop' });
  await new Promise((r) => (t.child.exitCode !== null ? r(null) : t.child.once('exit', r)));
  if (process.env.BENCH_KEEP_DATA) console.log(`  (data kept in ${t.dir})`);
  else await rm(t.dir, { recursive: true, force: true });
  return memory;
}

function message(domain: string, i = 0, recipients = 3) {
  const body = {
    from: `Bench <sender@${domain}>`,
    to: Array.from({ length: recipients }, (_, n) => `user${n + 1}@${domain}`),
    subject: `Your receipt #${i}`,
    text: 'Thanks for your order. '.repeat(38),
    tags: { category: 'receipt' },
  };
  return JSON.stringify(body);
}

// ---------- 1. admission ----------
interface Load { rps: number; p50: number; p99: number; non2xx: number; errors: number; total: number; idleRss: number; peakRss: number; cpuMs: number; mainCpuMs: number; load: string; delivered?: number }

const TARGETS = [
  { id: 'node', kind: 'node', name: 'bare node:http (JSON parse, 202)', env: {} },
  { id: 'sqlite', kind: 'sqlite', name: 'sqlite3 group commit, same rows', env: {} },
  { id: 'relay', kind: 'relay', name: 'raven relay POST /v1/emails (sink delivery, default pacing)', env: {} },
  { id: 'relay8', kind: 'relay', name: '  relay, delivery concurrency 8', env: { BENCH_DELIVERY_CONCURRENCY: '8' } },
  { id: 'relay1', kind: 'relay', name: '  relay, delivery concurrency 1', env: { BENCH_DELIVERY_CONCURRENCY: '1' } },
] as const;
/** BENCH_ADMISSION_TARGETS=sqlite,relay1: only these targets (ids above), to iterate on one comparison. */
const ADMISSION_TARGETS = process.env.BENCH_ADMISSION_TARGETS?.split(',').map((x) => x.trim());
const admissionTargets = TARGETS.filter((t) => !ADMISSION_TARGETS || ADMISSION_TARGETS.includes(t.id));

let idempotencyCounter = 0;

/** Recipients the relay has delivered (or tried) since it started, from its /metrics counters. */
async function deliveriesSoFar(t: { url: string }): Promise<number> {
  const text = await (await fetch(`${t.url}/metrics`)).text();
  let n = 0;
  for (const m of text.matchAll(/^raven_deliveries_total\{[^}]*\} (\d+)$/gm)) n += Number(m[1]);
  return n;
}

/** An admission target started, warmed up and then held (SIGSTOP) between its measured windows. */
interface LiveTarget {
  target: (typeof TARGETS)[number];
  t: Target;
  opts: Parameters<typeof autocannon>[0];
  idle: Memory;
}

// Held targets take no CPU (a relay's delivery backlog would otherwise run on during the others'
// windows); a resumed relay takes the re-warm to see the burst as saturating again (its worker
// then keeps 2 dispatches in flight, domain/admission-load.ts), so the window measures that state.
const hold = (live: LiveTarget) => process.kill(live.t.child.pid!, 'SIGSTOP');
const resume = (live: LiveTarget) => process.kill(live.t.child.pid!, 'SIGCONT');

async function startLoadTarget(target: (typeof TARGETS)[number]): Promise<LiveTarget> {
  const t = await startTarget(target.kind, target.env);
  const idle = await ask<Memory>(t, { cmd: 'memory' });
  const bodyStr = message(t.domain);
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${t.apiKey}` };
  const opts = {
    url: t.url,
    connections: CONNECTIONS,
    requests: [
      {
        method: 'POST' as const,
        path: '/v1/emails',
        headers,
        body: bodyStr,
        // A fresh Idempotency-Key on every request, as a careful client sends: the relay and the
        // sqlite3 ceiling both store an idempotency row per email.
        setupRequest: (req: any) => ({ ...req, headers: { ...req.headers, 'idempotency-key': `bench-${idempotencyCounter++}` } }),
      },
    ],
  };
  const probe = await fetch(`${t.url}/v1/emails`, { method: 'POST', headers: { ...headers, 'idempotency-key': 'bench-probe' }, body: bodyStr });
  if (probe.status !== 202) console.log(`  (warning: ${target.name} answered ${probe.status}: ${await probe.text()})`);
  else await probe.arrayBuffer();
  await autocannon({ ...opts, amount: ADMISSION_WARM_UP }); // warm-up, not reported
  const live = { target, t, opts, idle };
  hold(live);
  return live;
}

/** One measured window of a held target: resumed, re-warmed (not counted), measured, held again. */
async function measureWindow(live: LiveTarget, seconds: number): Promise<Load> {
  const { target, t, opts } = live;
  resume(live);
  await autocannon({ ...opts, duration: ADMISSION_REWARM_SECONDS });
  // CPU per answered request over the measured window: the target's process (all threads: for the
  // relay its delivery into the sink too) and its main thread alone.
  const pid = t.child.pid!;
  const deliveredBefore = target.kind === 'relay' ? await deliveriesSoFar(t) : 0;
  const cpuBefore = [cpuSeconds(pid), cpuSeconds(`${pid}/task/${pid}`)];
  const r = await autocannon({ ...opts, duration: seconds });
  const cpuMs = ((cpuSeconds(pid) - cpuBefore[0]!) * 1000) / r.requests.total;
  const mainCpuMs = ((cpuSeconds(`${pid}/task/${pid}`) - cpuBefore[1]!) * 1000) / r.requests.total;
  const delivered = target.kind === 'relay' ? (await deliveriesSoFar(t)) - deliveredBefore : undefined;
  hold(live);
  return {
    cpuMs,
    mainCpuMs,
    delivered: delivered === undefined ? undefined : delivered / 3 / seconds,
    load: loadNow(),
    rps: r.requests.total / seconds,
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    total: r.requests.total,
    idleRss: live.idle.rss,
    peakRss: 0,
  };
}

const range = (xs: number[], fmt: (x: number) => string) => {
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  return lo === hi ? fmt(lo) : `${fmt(lo)}–${fmt(hi)}`;
};

// Every target is started and warmed up once, then held; the rounds measure each in turn for
// SECONDS / ADMISSION_ROUNDS, so the ceilings and the relays are measured minutes apart no more
// (session 12: the ceiling alone moved from 3,824 to 6,259 req/s between runs a few minutes apart).
async function admission() {
  const seconds = SECONDS / ADMISSION_ROUNDS;
  console.log(
    `admission: ${CONNECTIONS} connections, ~${message('x.test').length} B JSON, 3 recipients, a fresh Idempotency-Key per request; each target warmed up ` +
      `(${ADMISSION_WARM_UP} requests), then ${ADMISSION_ROUNDS} interleaved rounds of ${seconds.toFixed(1)} s per target (each after ${ADMISSION_REWARM_SECONDS} s not counted; ` +
      `the targets not measured held with SIGSTOP)\n`,
  );
  const live: LiveTarget[] = [];
  const runs = new Map<string, Load[]>(TARGETS.map((t) => [t.id, []]));
  try {
    for (const target of admissionTargets) live.push(await startLoadTarget(target));
    for (let round = 1; round <= ADMISSION_ROUNDS; round++) {
      const line: string[] = [];
      for (const l of live) {
        const r = await measureWindow(l, seconds);
        runs.get(l.target.id)!.push(r);
        const vs = l.target.kind === 'relay' && runs.get('sqlite')!.length === round ? ` = ${((r.rps / runs.get('sqlite')![round - 1]!.rps) * 100).toFixed(1)}%` : '';
        line.push(
          `${l.target.id} ${r.rps.toFixed(0)}${vs} (${r.cpuMs.toFixed(2)}/${r.mainCpuMs.toFixed(2)} ms${r.delivered === undefined ? '' : `, ${r.delivered.toFixed(0)} del/s`}${r.non2xx + r.errors > 0 ? `, ${r.non2xx} non2xx ${r.errors} errors` : ''})`,
        );
      }
      console.log(`round ${round}: ${line.join(', ')}; ${loadNow()}`);
    }
  } finally {
    for (const l of live) {
      resume(l);
      const memory = await stopTarget(l.t);
      for (const r of runs.get(l.target.id)!) r.peakRss = memory.peakRss;
    }
  }
  console.log(`  (req/s per target and round; in brackets CPU ms per request, whole process / main thread, and for a relay the emails it delivered a second meanwhile)\n`);
  const of = (id: string) => runs.get(id)!;
  const sum = (rs: Load[], f: (r: Load) => number) => rs.reduce((a, r) => a + f(r), 0);
  for (const target of admissionTargets) {
    const rs = of(target.id);
    const n = sum(rs, (r) => r.total);
    const perRequest = (f: (r: Load) => number) => (sum(rs, (r) => f(r) * r.total) / n).toFixed(2);
    console.log(
      `${target.name.padEnd(34)} ${(n / (seconds * rs.length)).toFixed(0).padStart(7)} req/s  p50 ${range(rs.map((r) => r.p50), String)} ms  p99 ${range(rs.map((r) => r.p99), String)} ms  ` +
        `total ${n}  non2xx ${sum(rs, (r) => r.non2xx)}  errors ${sum(rs, (r) => r.errors)}  RSS idle ${mb(rs[0]!.idleRss)}, peak ${mb(rs[0]!.peakRss)}  ` +
        `CPU ${perRequest((r) => r.cpuMs)} ms/request (main thread ${perRequest((r) => r.mainCpuMs)})` +
        `${target.kind === 'relay' ? `; delivered meanwhile ${(sum(rs, (r) => r.delivered ?? 0) / rs.length).toFixed(0)} emails/s` : ''}`,
    );
  }
  // Over all rounds (requests over equal windows), and the range of the rounds' own ratios.
  const ratio = (a: string, b: string) =>
    of(a).length === 0 || of(b).length === 0
      ? '-'
      : `${((sum(of(a), (r) => r.total) / sum(of(b), (r) => r.total)) * 100).toFixed(1)}% (rounds ${range(of(a).map((r, i) => (r.rps / of(b)[i]!.rps) * 100), (x) => `${x.toFixed(1)}%`)})`;
  console.log(`\nrelay / node ceiling:     ${ratio('relay', 'node')}`);
  const p99 = (id: string) => (of(id).length === 0 ? '-' : range(of(id).map((r) => r.p99), (x) => `${x} ms`));
  console.log(`relay / sqlite ceiling:   ${ratio('relay', 'sqlite')}   (target >= 60%; delivery concurrency 8: ${ratio('relay8', 'sqlite')}, 1: ${ratio('relay1', 'sqlite')}; ${loadNow()})`);
  console.log(`relay p99:                ${p99('relay')}   (target < 50 ms; delivery concurrency 8: ${p99('relay8')}, 1: ${p99('relay1')})`);
  if (of('relay').length > 0) console.log(`relay RSS (its process):  idle ${mb(of('relay')[0]!.idleRss)}, peak ${mb(of('relay')[0]!.peakRss)}`);
}

// ---------- 2. end to end ----------
async function pool<T>(n: number, concurrency: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await fn(i);
      }
    }),
  );
  return out;
}

// The end-to-end and sustained loads post through a lighter client than fetch (bench/email-poster.ts).
const poster = new EmailPoster();

/** Admits one email; its id. */
async function send(t: Target, i: number, recipients: number): Promise<string> {
  const { status, answer } = await poster.post(t.url, t.apiKey, message(t.domain, i, recipients));
  if (status !== 202 && status !== 200) throw new Error(`send ${status} ${JSON.stringify(answer)}`);
  return answer.id as string;
}

/** Jobs waiting (ready) and in flight (running, claimed by the worker), from the relay's own gauge. */
const PACINGS = ['full', 'burst', 'behind', 'saturated'] as const;

async function queueJobs(t: Target): Promise<{ ready: number; running: number; pacing: Record<(typeof PACINGS)[number], number> }> {
  const text = await (await fetch(`${t.url}/metrics`)).text();
  const jobs = { ready: 0, running: 0, pacing: { full: 0, burst: 0, behind: 0, saturated: 0 } };
  for (const m of text.matchAll(/^raven_queue_jobs\{state="(ready|running)"\} (\d+)$/gm)) jobs[m[1] as 'ready' | 'running'] += Number(m[2]);
  for (const m of text.matchAll(/^raven_delivery_pacing_seconds_total\{mode="(\w+)"\} ([\d.e+-]+)$/gm)) jobs.pacing[m[1] as (typeof PACINGS)[number]] = Number(m[2]);
  return jobs;
}

/** The worker's pacing between two readings: each mode's share of the time, the modes it used. */
function pacingShares(before: Record<string, number>, after: Record<string, number>): string {
  const spent = PACINGS.map((mode) => [mode, (after[mode] ?? 0) - (before[mode] ?? 0)] as const);
  const total = spent.reduce((sum, [, s]) => sum + s, 0);
  return total > 0 ? spent.filter(([, s]) => s > 0).map(([mode, s]) => `${mode} ${((100 * s) / total).toFixed(0)} %`).join(', ') : 'none read';
}

/** Jobs not finished yet (ready or running). */
async function queueDepth(t: Target): Promise<number> {
  const { ready, running } = await queueJobs(t);
  return ready + running;
}

async function waitForEmptyQueue(t: Target, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if ((await queueDepth(t)) === 0) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

/** Admission -> delivered of each email, from the server's own timestamps (created_at, the last email.delivered). */
async function deliveryLatencies(t: Target, ids: string[]) {
  const auth = { authorization: `Bearer ${t.apiKey}` };
  const lat: number[] = [];
  let firstCreated = Infinity;
  let lastDelivered = 0;
  await pool(ids.length, 20, async (i) => {
    const d: any = await (await fetch(`${t.url}/v1/emails/${ids[i]}`, { headers: auth })).json();
    const created = Date.parse(d.created_at);
    const times = d.events.filter((e: any) => e.type === 'email.delivered').map((e: any) => Date.parse(e.occurredAt));
    if (d.status !== 'delivered' || times.length === 0) return;
    const done = Math.max(...times);
    firstCreated = Math.min(firstCreated, created);
    lastDelivered = Math.max(lastDelivered, done);
    lat.push(done - created);
  });
  lat.sort((a, b) => a - b);
  return { counted: lat.length, p50: pct(lat, 50), p99: pct(lat, 99), perSec: lat.length / ((lastDelivered - firstCreated) / 1000) };
}

// Each end-to-end load is measured after a warm-up of E2E_WARM_UP messages through the same path,
// not counted (as the admission section's second of warm-up): otherwise the 500 measured pay for
// the JIT's first compilations, a cost a relay pays once, not per email. The relay's CPU per email
// still fell round after round until about 2,000 emails had passed: in rounds of 500 after 200,
// 4.38, 4.40, 4.12, 3.36, 3.20, 3.18, 2.52, 3.40 ms (session 11, load 22-23; V8's background
// compiler still optimizing functions first made hot in each of the three isolates), so the 500
// measured after 1,000 paid about a quarter more than a warmed relay. The warm-up is 3,000, as the
// sink section's; the ceiling gets the same.
const E2E_WARM_UP = Number(process.env.BENCH_E2E_WARM_UP ?? 3_000);

/**
 * The warm-up's work done: its emails delivered, and their inbox entries (the relay delivers into its
 * own sink) indexed, which the indexer defers while the relay is busy. Otherwise the measured load
 * pays for the warm-up's indexing: a sustained run after 3,000 of warm-up fell behind in its first
 * 20 seconds (queue 397, p99 1,121 ms) while the indexer caught up (session 11).
 */
async function warmUpDone(t: Target) {
  await waitForEmptyQueue(t, 60_000);
  await ask(t, { cmd: 'indexed' });
}

/** One measured load through the relay: E2E_N emails sent, then until the queue is empty. */
async function e2eRelayRound(t: Target, recipients: number) {
  const cpu = cpuMeter(targetCpu('relay', t.child.pid, t.runtimeThreads));
  const start = Date.now();
  const ids = await pool(E2E_N, 20, (i) => send(t, i, recipients));
  const admittedMs = Date.now() - start;
  await waitForEmptyQueue(t, 60_000);
  const wallMs = Date.now() - start;
  const cpuShares = cpu({ n: E2E_N, unit: 'email' });
  const figures = await deliveryLatencies(t, ids);
  return { ...figures, admittedMs, wallMs, cpuShares };
}

/** A bare smtp-server that accepts and drops every message: the ceiling of SMTP intake. */
async function bareSmtpServer(onMessage: () => void = () => {}) {
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    onData(stream, _session, cb) {
      stream.on('data', () => {});
      stream.on('end', () => {
        onMessage();
        cb();
      });
    },
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { port: (server.server.address() as any).port as number, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** n messages sent by 20 concurrent senders through a nodemailer pool of 8 connections; msgs/s and send latency. */
async function smtpLoad(port: number, n: number, recipients: number, connections = 8, auth?: { user: string; pass: string }) {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true, pool: true, maxConnections: connections, maxMessages: Infinity, auth });
  const start = Date.now();
  let failed = 0;
  const lat = await pool(n, 20, async (i) => {
    const t0 = Date.now();
    const m = JSON.parse(message('example.test', i, recipients));
    await transport.sendMail({ from: m.from, to: m.to, subject: m.subject, text: m.text }).catch(() => failed++);
    return Date.now() - t0;
  });
  const wallMs = Date.now() - start;
  transport.close();
  lat.sort((a, b) => a - b);
  return { p50: pct(lat, 50), p99: pct(lat, 99), perSec: n / (wallMs / 1000), failed, lat, wallMs };
}

// One relay, warmed, and the ceiling (a bare smtp-server fed by nodemailer in this process), warmed
// too, measured in turns: E2E_ROUNDS rounds of E2E_N each, the relay first. This machine's figures
// swing between runs minutes apart (session 12: the ceiling from 1,031 to 1,420 msgs/s), and a
// round of 500 lasted under a second, its first admission-to-delivery wait a tenth of it; so the
// rounds are longer and the two are measured side by side, every round printed, the ratio over
// all of them. The relay's deferred indexing ends before each ceiling round (it would take the
// ceiling's CPU).
async function e2e(recipients: number) {
  const target = recipients === 1 ? 60 : 50; // Issue 24: 1 recipient >= 60 % of this run's SMTP ceiling; 3 recipients >= 50 %.
  console.log(
    `\nend to end: ${E2E_ROUNDS} rounds of ${E2E_N} emails x ${recipients} recipient${recipients === 1 ? '' : 's'}, 20 concurrent senders, ` +
      `the relay then the SMTP ceiling in each, both warmed by ${E2E_WARM_UP} (${loadNow()})`,
  );
  const t = await startTarget('relay');
  let received = 0;
  const ceiling = await bareSmtpServer(() => received++);
  await pool(E2E_WARM_UP, 20, (i) => send(t, i, recipients));
  await warmUpDone(t);
  await smtpLoad(ceiling.port, E2E_WARM_UP, recipients);
  const relaySeconds: number[] = [];
  const ceilingSeconds: number[] = [];
  let delivered = 0;
  for (let round = 1; round <= E2E_ROUNDS; round++) {
    const e = await e2eRelayRound(t, recipients);
    console.log(
      `round ${round}: raven relay -> sink      delivered ${e.counted}/${E2E_N}  admission->delivered p50 ${e.p50} ms  p99 ${e.p99} ms  ` +
        `${e.perSec.toFixed(0)} delivered/s  (all admitted in ${e.admittedMs} ms, queue empty after ${e.wallMs} ms)`,
    );
    console.log(`  CPU while sending and delivering (share of one core, all threads): ${e.cpuShares}`);
    await ask(t, { cmd: 'indexed' });
    received = 0;
    const c = await smtpLoad(ceiling.port, E2E_N, recipients);
    console.log(
      `round ${round}: nodemailer pool (8) -> smtp-server  received ${received}/${E2E_N}  send p50 ${c.p50} ms  p99 ${c.p99} ms  ${c.perSec.toFixed(0)} msgs/s` +
        `   round ratio ${((e.perSec / c.perSec) * 100).toFixed(1)}%`,
    );
    delivered += e.counted;
    relaySeconds.push(e.counted / e.perSec);
    ceilingSeconds.push(c.wallMs / 1000);
  }
  await ceiling.close();
  await stopTarget(t);
  const relayRate = delivered / relaySeconds.reduce((a, b) => a + b, 0);
  const ceilingRate = (E2E_N * E2E_ROUNDS) / ceilingSeconds.reduce((a, b) => a + b, 0);
  console.log(
    `relay / nodemailer ceiling over the rounds: ${((relayRate / ceilingRate) * 100).toFixed(1)}% (${relayRate.toFixed(0)} against ${ceilingRate.toFixed(0)} msgs/s)` +
      `   (target >= ${target}%; ${loadNow()})`,
  );
}

// ---------- 2b. sustained rate ----------
async function sustained() {
  const total = SUSTAINED_RATE * SUSTAINED_SECONDS;
  console.log(
    `\nsustained: ${SUSTAINED_RATE} emails/s offered for ${SUSTAINED_SECONDS} s (${total} emails x 1 recipient, sent on a fixed schedule, ` +
      `after a warm-up of ${E2E_WARM_UP} not counted; ${loadNow()})`,
  );
  const t = await startTarget('relay');
  // A warmed relay, as the end-to-end loads (E2E_WARM_UP): a fresh one pays its JIT's first
  // compilations in the run's first seconds, at more CPU per email than 400/s leaves room for.
  await pool(E2E_WARM_UP, 20, (i) => send(t, i, 1));
  await warmUpDone(t);
  const cpu = cpuMeter(targetCpu('relay', t.child.pid, t.runtimeThreads));
  const ids: string[] = [];
  const depths: number[] = [];
  // Each second: jobs waiting / in flight (the worker's claimed jobs), and the worker's pacing
  // that second when it was not its full concurrency (b burst, B behind, S saturated: the
  // admission-first rules of queue/worker.ts, which a steady schedule should not set off).
  const trace: string[] = [];
  let sending = true;
  const pacingAtStart = (await queueJobs(t)).pacing;
  let pacingAtEnd = pacingAtStart;
  const sampler = (async () => {
    let last = pacingAtStart;
    while (sending) {
      const jobs = await queueJobs(t).catch(() => ({ ready: NaN, running: NaN, pacing: last }));
      depths.push(jobs.ready + jobs.running);
      const spent = PACINGS.map((mode) => jobs.pacing[mode] - last[mode]);
      const most = spent.indexOf(Math.max(...spent));
      trace.push(`${jobs.ready}/${jobs.running}${['', 'b', 'B', 'S'][most]}`);
      last = pacingAtEnd = jobs.pacing;
      await new Promise((r) => setTimeout(r, 1_000));
    }
  })();
  const start = performance.now();
  let late = 0;
  let failed = 0;
  const sends: Array<Promise<void>> = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / SUSTAINED_RATE;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    else if (wait < -100) late++;
    // A refused or dropped request is counted, not fatal: an overloaded relay is a result too.
    sends.push(send(t, i, 1).then((id) => void ids.push(id), () => void failed++));
  }
  const offeredS = (performance.now() - start) / 1000;
  await Promise.all(sends);
  sending = false;
  await sampler;
  const depthAtEnd = await queueDepth(t);
  const drainStart = Date.now();
  const drained = await waitForEmptyQueue(t, 120_000);
  const drainMs = Date.now() - drainStart;
  const cpuShares = cpu({ n: ids.length, unit: 'admitted email' });
  const figures = await deliveryLatencies(t, ids);
  const memory = await stopTarget(t);
  const maxDepth = Math.max(...depths.filter((d) => !Number.isNaN(d)), depthAtEnd);
  console.log(
    `offered ${(total / offeredS).toFixed(0)} emails/s over ${offeredS.toFixed(1)} s (${late} sends more than 100 ms late, ${failed} failed)  ` +
      `delivered ${figures.counted}/${total}  ` +
      `admission->delivered p50 ${figures.p50} ms  p99 ${figures.p99} ms   (target p99 < 1000 ms)`,
  );
  console.log(
    `queue depth (ready + running, sampled each second): max ${maxDepth}, at the end of sending ${depthAtEnd}; ` +
      `${drained ? `empty ${drainMs} ms later` : 'NOT empty 120 s later'}: ${maxDepth <= SUSTAINED_RATE && drained ? 'kept up' : 'fell behind'}   relay peak RSS ${mb(memory.peakRss)}`,
  );
  console.log(`  CPU over the run (share of one core, all threads): ${cpuShares}; ${loadNow()}`);
  console.log(`  jobs waiting/in flight, each second of sending: ${trace.join(' ')}`);
  console.log(`  the worker's pacing while sending (raven_delivery_pacing_seconds_total): ${pacingShares(pacingAtStart, pacingAtEnd)}`);
}

// ---------- 2c. sink intake, and memory after many captured messages ----------
/** MailDev 3, installed for the bench only (never a project dependency): BENCH_MAILDEV_DIR reuses an install. */
async function installMailDev(): Promise<{ dir: string; temporary: boolean }> {
  const given = process.env.BENCH_MAILDEV_DIR;
  if (given && existsSync(path.join(given, 'node_modules', 'maildev'))) return { dir: given, temporary: false };
  const dir = await mkdtemp(path.join(os.tmpdir(), 'raven-bench-maildev-'));
  const r = spawnSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--loglevel=error', '--prefix', dir, 'maildev@3'], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error('cannot install maildev for the bench');
  return { dir, temporary: true };
}

async function startMailDev(installDir: string) {
  const mailDir = await mkdtemp(path.join(os.tmpdir(), 'raven-bench-maildev-mail-'));
  const child = fork(path.join(here, 'maildev-target.ts'), [installDir, mailDir], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { smtpPort }: any = await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`maildev exited ${code}`)));
  });
  return {
    smtpPort: smtpPort as number,
    pid: child.pid,
    async stop(): Promise<Memory> {
      const memory = await ask<Memory>({ child }, { cmd: 'stop' });
      await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
      await rm(mailDir, { recursive: true, force: true });
      return memory;
    },
  };
}

/** CPU milliseconds per message between two readings of cpuSeconds (all the process's threads). */
const cpuMsPer = (before: number, after: number, n: number) => `${(((after - before) * 1000) / n).toFixed(2)} ms`;

/**
 * CPU milliseconds per message of each thread that used any between two readings of
 * threadCpuSeconds, busiest first: `main`, else the thread id's distance from the process id (the
 * relay starts its threads in the same order every time, so the same offsets are the same threads).
 */
function threadMsPer(pid: number, before: Map<string, number>, after: Map<string, number>, n: number): string {
  return [...after]
    .map(([tid, seconds]) => [tid === String(pid) ? 'main' : `+${Number(tid) - pid}`, ((seconds - (before.get(tid) ?? 0)) * 1000) / n] as const)
    .filter(([, ms]) => ms >= 0.01)
    .sort((a, b) => b[1] - a[1])
    .map(([name, ms]) => `${name} ${ms.toFixed(2)}`)
    .join(', ');
}

type SinkLoad = (port: number, connections: number) => Promise<{ perSec: number; p50: number; p99: number; failed: number }>;

/** The sink section's load of n messages of 3 recipients (SINK_CLIENT), composed now; sent to a port over some connections by the function it returns. */
async function sinkLoadOf(n: number): Promise<SinkLoad> {
  if (SINK_CLIENT === 'nodemailer') return (port, connections) => smtpLoad(port, n, 3, connections);
  const load = await composeBlast(Array.from({ length: n }, (_, i) => JSON.parse(message('example.test', i, 3)) as BlastMessage));
  return (port, connections) => smtpBlast(port, load, connections);
}
const sinkClient =
  SINK_CLIENT === 'nodemailer'
    ? '20 concurrent senders, a nodemailer pool of C connections'
    : 'C raw connections with PIPELINING (bench/smtp-blast.ts; messages composed by nodemailer before the clock starts)';

/** One sink target of the section, up and warmed: its SMTP port, its process, and what it does after each measured load. */
interface SinkTarget {
  name: string;
  smtpPort: number;
  pid: number;
  /** After a measured load, before the next target's: the relay indexes what it deferred. */
  settle(): Promise<void>;
  stop(): Promise<unknown>;
}

async function sinkTargets(install: { dir: string }, warmUp: SinkLoad, connections: number): Promise<SinkTarget[]> {
  const relay = await startTarget('relay');
  const maildev = await startMailDev(install.dir);
  const bare = await startTarget('smtp');
  const targets: SinkTarget[] = [
    { name: "raven sink (SQLite, fsync'd)", smtpPort: relay.smtpPort, pid: relay.child.pid!, settle: () => ask(relay, { cmd: 'indexed' }), stop: () => stopTarget(relay) },
    { name: 'MailDev 3 (files)', smtpPort: maildev.smtpPort, pid: maildev.pid!, settle: async () => undefined, stop: () => maildev.stop() },
    { name: 'bare smtp-server (drops all)', smtpPort: bare.smtpPort, pid: bare.child.pid!, settle: async () => undefined, stop: () => stopTarget(bare) },
  ];
  for (const t of targets) {
    await warmUp(t.smtpPort, connections);
    await t.settle(); // the relay: the warm-up's entries indexed before the measured loads
  }
  return targets;
}

// The targets are started and warmed up once; each round then measures all three at each C, in an
// order that turns round by round, so no target always runs after the same one. A target's intake
// at a C is its messages over its time there in all rounds, and its intake its best C: a best of
// means, not of single noisy points (one round's points were a second of load each).
async function sinkIntake() {
  const perPoint = Math.max(1, Math.round(SINK_N / SINK_CONNECTIONS.length));
  const warmUpConnections = SINK_CONNECTIONS[Math.floor(SINK_CONNECTIONS.length / 2)]!;
  console.log(
    `\nsink intake: ${perPoint} messages x 3 recipients at each of C = ${SINK_CONNECTIONS.join(', ')} connections, per target and round (after ${SINK_WARM_UP} at ${warmUpConnections} not counted), ` +
      `${sinkClient} -> accepted (250); ${SINK_ROUNDS} round(s), the raven sink, MailDev 3 and a bare smtp-server in turns at each C (the order turning each round); ` +
      `each target's intake = its best C over all rounds (${loadNow()})`,
  );
  const install = await installMailDev();
  const [warmUpLoad, pointLoad] = [await sinkLoadOf(SINK_WARM_UP), await sinkLoadOf(perPoint)];
  const pc = (a: number, z: number) => `${((a / z) * 100).toFixed(0)}%`;
  try {
    const targets = await sinkTargets(install, warmUpLoad, warmUpConnections);
    try {
      // Seconds spent at each C by each target, over the rounds.
      const seconds = targets.map(() => SINK_CONNECTIONS.map(() => 0));
      const threads0 = targets.map((t) => threadCpuSeconds(t.pid));
      const roundRatios: number[] = [];
      for (let round = 0; round < SINK_ROUNDS; round++) {
        const best = targets.map(() => 0);
        for (const [c, connections] of SINK_CONNECTIONS.entries()) {
          const rates: number[] = [];
          const line: string[] = [];
          const order = targets.map((_, i) => (i + round) % targets.length);
          for (const i of order) {
            const t = targets[i]!;
            const cpu0 = cpuSeconds(String(t.pid));
            const r = await pointLoad(t.smtpPort, connections);
            const cpu1 = cpuSeconds(String(t.pid));
            // The relay's deferred indexing, after the last 250: its own figure.
            await t.settle();
            const indexing = i === 0 ? `, then ${cpuMsPer(cpu1, cpuSeconds(String(t.pid)), perPoint)} indexing` : '';
            rates[i] = r.perSec;
            seconds[i]![c]! += perPoint / r.perSec;
            best[i] = Math.max(best[i]!, r.perSec);
            line[i] = `${t.name.split(' (')[0]} ${r.perSec.toFixed(0)} (${cpuMsPer(cpu0, cpu1, perPoint)}${indexing}; p99 ${r.p99} ms${r.failed > 0 ? `, ${r.failed} failed` : ''})`;
          }
          console.log(`  round ${round + 1}, C=${String(connections).padEnd(3)} ${line.join(', ')} msgs/s: raven sink / MailDev ${pc(rates[0]!, rates[1]!)}  (${loadNow()})`);
        }
        roundRatios.push(best[0]! / best[1]!);
      }
      console.log(`  (msgs/s; in brackets the target's CPU per message during its load, all threads)`);
      for (const [i, t] of targets.entries()) {
        console.log(`  ${t.name} CPU ms per message by thread, all its loads: ${threadMsPer(t.pid, threads0[i]!, threadCpuSeconds(t.pid), perPoint * SINK_CONNECTIONS.length * SINK_ROUNDS)}`);
      }
      const atC = seconds.map((s) => s.map((sec) => (perPoint * SINK_ROUNDS) / sec));
      const best = atC.map((rates) => Math.max(...rates));
      for (const [i, t] of targets.entries()) {
        console.log(`  ${t.name.padEnd(29)} over the rounds: ${SINK_CONNECTIONS.map((c, n) => `C=${c} ${atC[i]![n]!.toFixed(0)}`).join(', ')} msgs/s`);
      }
      console.log(
        `raven sink / MailDev, each at its best C: ${pc(best[0]!, best[1]!)} over ${SINK_ROUNDS} round(s) (rounds ${range(roundRatios, (x) => `${(x * 100).toFixed(0)}%`)})   (target >= 200%; ` +
          `raven sink ${best[0]!.toFixed(0)}, MailDev ${best[1]!.toFixed(0)}, bare ${best[2]!.toFixed(0)} msgs/s; raven sink / bare smtp-server ${pc(best[0]!, best[2]!)}, ` +
          `2x MailDev = ${pc(2 * best[1]!, best[2]!)} of the bare server; ${loadNow()})`,
      );
    } finally {
      for (const t of targets) await t.stop();
    }
  } finally {
    if (install.temporary) await rm(install.dir, { recursive: true, force: true });
  }
}

// ---------- SMTP submission ----------
/** n one-recipient POST /v1/emails by 20 concurrent senders over keep-alive HTTP; admitted/s and latency. */
async function httpLoad(t: Target, n: number) {
  const start = Date.now();
  let failed = 0;
  const lat = await pool(n, 20, async (i) => {
    const t0 = Date.now();
    const res = await fetch(`${t.url}/v1/emails`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${t.apiKey}` },
      body: message(t.domain, i, 1),
    });
    if (res.status !== 202) failed++;
    await res.arrayBuffer();
    return Date.now() - t0;
  });
  const wallMs = Date.now() - start;
  lat.sort((a, b) => a - b);
  return { p50: pct(lat, 50), p99: pct(lat, 99), perSec: n / (wallMs / 1000), failed, lat, wallMs };
}

type Run = Awaited<ReturnType<typeof httpLoad>>;

/** Several runs as one: messages over the summed wall time, percentiles over every latency. */
function combined(runs: Run[]) {
  const lat = runs.flatMap((r) => r.lat).sort((a, b) => a - b);
  const wallMs = runs.reduce((sum, r) => sum + r.wallMs, 0);
  return { p50: pct(lat, 50), p99: pct(lat, 99), perSec: lat.length / (wallMs / 1000), failed: runs.reduce((sum, r) => sum + r.failed, 0) };
}

/** Holds or resumes the project's delivery through the admin API (mail keeps being admitted and waits). */
async function setDelivery(t: Target, what: 'pause' | 'resume'): Promise<void> {
  const res = await fetch(`${t.url}/admin/v1/projects/${t.projectId}/delivery/${what}`, { method: 'POST', headers: { authorization: `Bearer ${t.adminToken}` } });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`delivery/${what} answered ${res.status}`);
}

// The bare smtp-server only takes mail in: it stores nothing and delivers nothing. The relay's
// intake is judged against it like for like, with the project's delivery held (admin API) while a
// relay load runs and resumed afterwards, for submission and HTTP alike; the same loads with
// delivery running (the relay then also signs and delivers every message into its own sink, in the
// same process, on the same cores) are printed beside them, not judged.
//
// The loads run in turns (submission and HTTP admission with delivery held, the bare smtp-server,
// then submission and HTTP with delivery running; BENCH_SUBMISSION_ROUNDS rounds of
// BENCH_SUBMISSION_N / rounds messages each), so a shared machine whose load drifts weighs on all
// alike; each relay load starts from an idle relay (its delivery queue drained), so none pays for
// the delivery of the one before. A warm-up of each, not counted, first: otherwise the first load
// alone pays for the JIT.
async function submission() {
  console.log(
    `\nSMTP submission: ${SUBMISSION_N} messages x 1 recipient per load, 20 concurrent senders; SMTP through a nodemailer pool of 8 connections, ` +
      `250 only after the commit (${loadNow()})`,
  );
  const t = await startTarget('relay');
  const bare = await bareSmtpServer();
  const line = (name: string, r: { perSec: number; p50: number; p99: number; failed: number }) =>
    console.log(`${name.padEnd(50)} ${r.perSec.toFixed(0).padStart(6)} msgs/s  p50 ${String(r.p50).padStart(4)} ms  p99 ${String(r.p99).padStart(4)} ms  failed ${r.failed}`);
  const perRound = Math.ceil(SUBMISSION_N / SUBMISSION_ROUNDS);
  const auth = { user: 'raven', pass: t.apiKey };
  const runs = { smtpHeld: [] as Run[], httpHeld: [] as Run[], smtp: [] as Run[], http: [] as Run[], bare: [] as Run[] };
  const cpu = { held: 0, running: 0 };
  const idle = async () => {
    if (!(await waitForEmptyQueue(t, 120_000))) console.log('  (warning: the relay still had deliveries queued after 120 s)');
  };
  /** One relay load from an idle relay, its delivery held or running; the relay's CPU (all threads) until its queue is empty again. */
  const relayLoad = async (held: boolean, load: () => Promise<Run>): Promise<{ run: Run; cpuSeconds: number }> => {
    await idle();
    if (held) await setDelivery(t, 'pause');
    const before = cpuSeconds(String(t.child.pid));
    const run = await load();
    const intakeOnly = cpuSeconds(String(t.child.pid));
    if (held) await setDelivery(t, 'resume');
    await idle();
    return { run, cpuSeconds: (held ? intakeOnly : cpuSeconds(String(t.child.pid))) - before };
  };
  const smtpRelay = () => smtpLoad(t.submissionPort, perRound, 1, 8, auth);
  const httpRelay = () => httpLoad(t, perRound);
  const warmUp = Math.min(200, perRound);
  await smtpLoad(t.submissionPort, warmUp, 1, 8, auth);
  await httpLoad(t, warmUp);
  await smtpLoad(bare.port, warmUp, 1);
  for (let round = 0; round < SUBMISSION_ROUNDS; round++) {
    const smtpHeld = await relayLoad(true, smtpRelay);
    const httpHeld = await relayLoad(true, httpRelay);
    const ceiling = await smtpLoad(bare.port, perRound, 1);
    const smtp = await relayLoad(false, smtpRelay);
    const http = await relayLoad(false, httpRelay);
    cpu.held += smtpHeld.cpuSeconds;
    cpu.running += smtp.cpuSeconds;
    const ofBare = (r: Run) => `${((r.perSec / ceiling.perSec) * 100).toFixed(0)}%`;
    console.log(
      `  round ${round + 1}: delivery held: submission ${smtpHeld.run.perSec.toFixed(0)}, HTTP ${httpHeld.run.perSec.toFixed(0)}; ` +
        `delivery running: submission ${smtp.run.perSec.toFixed(0)}, HTTP ${http.run.perSec.toFixed(0)}; bare ${ceiling.perSec.toFixed(0)} msgs/s ` +
        `(submission / bare: held ${ofBare(smtpHeld.run)}, running ${ofBare(smtp.run)}; load average ${os.loadavg()[0]!.toFixed(1)})`,
    );
    runs.smtpHeld.push(smtpHeld.run);
    runs.httpHeld.push(httpHeld.run);
    runs.bare.push(ceiling);
    runs.smtp.push(smtp.run);
    runs.http.push(http.run);
  }
  await bare.close();
  await stopTarget(t);
  const [smtpHeld, httpHeld, smtp, http, ceiling] = [combined(runs.smtpHeld), combined(runs.httpHeld), combined(runs.smtp), combined(runs.http), combined(runs.bare)];
  line('raven submission, delivery held (AUTH, admitted, 250)', smtpHeld);
  line('raven POST /v1/emails, delivery held (202)', httpHeld);
  line('nodemailer pool (8) -> bare smtp-server', ceiling);
  line('raven submission, delivery running', smtp);
  line('raven POST /v1/emails, delivery running', http);
  const perMessage = (seconds: number) => `${((seconds / (perRound * SUBMISSION_ROUNDS)) * 1000).toFixed(2)} ms`;
  console.log(
    `relay CPU per submitted message (all threads): intake alone (delivery held) ${perMessage(cpu.held)}; ` +
      `intake and its delivery into the relay's own sink (delivery running, until the queue is empty) ${perMessage(cpu.running)}`,
  );
  const ratio = (a: { perSec: number }, b: { perSec: number }) => `${((a.perSec / b.perSec) * 100).toFixed(0)}%`;
  console.log(
    `submission / bare smtp-server, delivery held: ${ratio(smtpHeld, ceiling)}   (target >= 50%; judged with delivery held, because the bare ` +
      `server only takes mail in and the relay is measured doing the same)`,
  );
  console.log(
    `submission / bare smtp-server, delivery running: ${ratio(smtp, ceiling)}   (not judged: the relay also delivers every message into its own sink ` +
      `meanwhile, on the same cores)`,
  );
  console.log(`submission / HTTP admission: delivery held ${ratio(smtpHeld, httpHeld)}, running ${ratio(smtp, http)}; ${loadNow()}`);
}

async function capturedMemory() {
  console.log(`\nmemory with captured mail: ${CAPTURED_N} messages x 3 recipients through SMTP into the sink`);
  const t = await startTarget('relay');
  const idle = await ask<Memory>(t, { cmd: 'memory' });
  const r = await smtpLoad(t.smtpPort, CAPTURED_N, 3, 16);
  const after = await ask<Memory>(t, { cmd: 'memory' });
  await stopTarget(t);
  console.log(
    `captured ${CAPTURED_N} at ${r.perSec.toFixed(0)} msgs/s (failed ${r.failed}); relay RSS idle ${mb(idle.rss)}, after ${mb(after.rss)} (peak ${mb(after.peakRss)})`,
  );
}

// ---------- 3. CLI start-up ----------
function timeCmd(args: string[]): number {
  const runs: number[] = [];
  for (let i = 0; i < CLI_RUNS; i++) {
    const t0 = process.hrtime.bigint();
    const r = spawnSync(process.execPath, args, { cwd: root, env: { ...process.env, NODE_OPTIONS: '' }, stdio: 'ignore' });
    runs.push(Number(process.hrtime.bigint() - t0) / 1e6);
    if (i === 0 && r.status !== 0) console.log(`  (note: ${args.join(' ')} exited ${r.status})`);
  }
  return median(runs);
}

// ---------- 4. memory and reads at 100,000 emails ----------
async function timeGet(url: string, auth: Record<string, string>): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(url, { headers: auth });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}`);
  return performance.now() - t0;
}

/** p50 and p99 of READS_SAMPLES sequential GETs, after 20 not counted. */
async function sampleGets(pathFor: (i: number) => string, t: Target, auth: Record<string, string>) {
  for (let i = 0; i < 20; i++) await timeGet(`${t.url}${pathFor(i)}`, auth);
  const lat: number[] = [];
  for (let i = 0; i < READS_SAMPLES; i++) lat.push(await timeGet(`${t.url}${pathFor(i)}`, auth));
  lat.sort((a, b) => a - b);
  return { p50: pct(lat, 50), p99: pct(lat, 99) };
}

async function reads(emails: number) {
  console.log(`\nreads: ${emails} emails written straight into the relay's schema, ${READS_SAMPLES} sequential GETs per line`);
  const t = await startTarget('relay');
  const idle = await ask<Memory>(t, { cmd: 'memory' });
  const fillStart = Date.now();
  const db = await openDatabase(path.join(t.dir, 'raven.sqlite'));
  await fillEmails(db, t.bootstrap, emails);
  await db.close();
  const ms = Date.now() - fillStart;
  const filled = await ask<Memory>(t, { cmd: 'memory' });
  console.log(`fill (from the bench's process): ${(ms / 1000).toFixed(1)} s; relay RSS idle ${mb(idle.rss)}, after the fill ${mb(filled.rss)} (peak ${mb(filled.peakRss)})`);

  const created: any = await (
    await fetch(`${t.url}/admin/v1/projects/${t.projectId}/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bench-read', permission: 'email:read' }),
    })
  ).json();
  const keys = [
    { name: 'send key', auth: { authorization: `Bearer ${t.apiKey}` } },
    { name: 'read key', auth: { authorization: `Bearer ${created.key}` } },
  ];

  // Every page once, 100 at a time: the ids for the detail reads and a cursor 90% of the way down.
  const walkStart = Date.now();
  const pageMs: number[] = [];
  const ids: string[] = [];
  let deepCursor = '';
  let cursor: string | null = null;
  let seen = 0;
  do {
    const t0 = performance.now();
    const page: any = await (await fetch(`${t.url}/v1/emails?limit=100${cursor ? `&cursor=${cursor}` : ''}`, { headers: keys[0]!.auth })).json();
    pageMs.push(performance.now() - t0);
    seen += page.emails.length;
    ids.push(page.emails[0]?.id);
    cursor = page.next_cursor;
    if (!deepCursor && seen >= emails * 0.9 && cursor) deepCursor = cursor;
  } while (cursor);
  pageMs.sort((a, b) => a - b);
  console.log(
    `walk: ${seen} emails in ${pageMs.length} pages of 100 in ${((Date.now() - walkStart) / 1000).toFixed(1)} s, ` +
      `page p50 ${pct(pageMs, 50).toFixed(1)} ms  p99 ${pct(pageMs, 99).toFixed(1)} ms`,
  );

  // The fill's To addresses are customer<n>@domain, n < 10,000 (about 10 emails each), and
  // ops<n>@domain, n < 7 (about 14,000 each).
  const customer = (i: number) => encodeURIComponent(`customer${(i * 7_703) % 10_000}@${t.domain}`);
  const cases: Array<[string, (i: number) => string]> = [
    ['GET /v1/emails (first page, 50)', () => '/v1/emails'],
    ['?status=delivered (85%)', () => '/v1/emails?status=delivered'],
    ['?status=bounced (4%)', () => '/v1/emails?status=bounced'],
    ['?recipient=<To address> (~10 match)', (i) => `/v1/emails?recipient=${customer(i)}`],
    ['?recipient=<busy To> (~14,000 match)', (i) => `/v1/emails?recipient=ops${i % 7}%40${t.domain}`],
    ['?status=bounced&recipient=<To>', (i) => `/v1/emails?status=bounced&recipient=${customer(i)}`],
    ['?cursor=<90% deep>', () => `/v1/emails?cursor=${deepCursor}`],
    ['?status=bounced&cursor=<90% deep>', () => `/v1/emails?status=bounced&cursor=${deepCursor}`],
    ['?status=queued&cursor=<90%> (none)', () => `/v1/emails?status=queued&cursor=${deepCursor}`],
    ['GET /v1/emails/{id}', (i) => `/v1/emails/${ids[(i * 37) % ids.length]}`],
  ];
  for (const [name, pathFor] of cases) {
    const figures = [];
    for (const key of keys) {
      const r = await sampleGets(pathFor, t, key.auth);
      figures.push(`${key.name} p50 ${r.p50.toFixed(1).padStart(5)} ms  p99 ${r.p99.toFixed(1).padStart(5)} ms`);
    }
    console.log(`${name.padEnd(38)} ${figures.join('   ')}`);
  }
  // GET /metrics: the relay's CPU per scrape. The first reads the reputation rates (the last 30
  // days' recipients), which the relay then keeps a minute; the gauges are counted at each.
  const scrape = async () => (await fetch(`${t.url}/metrics`)).text();
  const firstCpu = cpuMeter(targetCpu('relay', t.child.pid));
  await scrape();
  const first = firstCpu({ n: 1, unit: 'scrape' });
  const scrapesCpu = cpuMeter(targetCpu('relay', t.child.pid));
  for (let i = 0; i < METRICS_SCRAPES; i++) await scrape();
  console.log(`GET /metrics, the first scrape (reads the reputation rates): ${first}`);
  console.log(`GET /metrics, ${METRICS_SCRAPES} scrapes within the minute after it: ${scrapesCpu({ n: METRICS_SCRAPES, unit: 'scrape' })}`);
  const end = await stopTarget(t);
  console.log(`relay RSS after the reads ${mb(end.rss)} (peak ${mb(end.peakRss)})`);
}

// ---------- main ----------
console.log(`Raven bench: node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model}), ${mb(os.totalmem())} RAM, load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
console.log(`sections: ${[...SECTIONS].join(', ')}\n`);

if (SECTIONS.has('admission')) await admission();

if (SECTIONS.has('e2e')) {
  await e2e(1);
  await e2e(3);
}
if (SECTIONS.has('sustained')) await sustained();
if (SECTIONS.has('sink')) {
  await sinkIntake();
  await capturedMemory();
}
if (SECTIONS.has('submission')) await submission();

if (SECTIONS.has('cli')) {
  console.log(`\nCLI start-up, median of ${CLI_RUNS} runs:`);
  const base = timeCmd(['-e', '0']);
  const ver = timeCmd(['dist/cli/main.js', '--version']);
  const dry = timeCmd(['dist/cli/main.js', 'send', '--dry-run', '--from', 'a@example.test', '--to', 'b@example.test', '--subject', 's', '--text', 't', '--api-key', 'rr_test_x']);
  console.log(`node -e 0                 ${base.toFixed(0)} ms`);
  console.log(`ravenctl --version        ${ver.toFixed(0)} ms  (+${(ver - base).toFixed(0)} ms over node, ${(ver / base).toFixed(2)}x; target <= 1.25x)`);
  console.log(`ravenctl send --dry-run   ${dry.toFixed(0)} ms  (+${(dry - base).toFixed(0)} ms over node, ${(dry / base).toFixed(2)}x; target <= 1.5x)`);
}

if (SECTIONS.has('reads')) await reads(READS_EMAILS);
// Opt-in (BENCH_ONLY=reads1m): 1,000,000 emails, about 3 GB on disk.
if (SECTIONS.has('reads1m')) await reads(1_000_000);
if (SECTIONS.has('sdk')) await sdkInstall();
if (SECTIONS.has('dashboard')) await dashboardBench();
if (SECTIONS.has('search')) await searchBench();
if (SECTIONS.has('wait')) await waitBench();
if (SECTIONS.has('checks')) {
  await checksBench({
    startRelay: () => startTarget('relay'),
    stopRelay: stopTarget as (t: unknown) => Promise<unknown>,
    smtpLoad: (port, n, recipients) => smtpLoad(port, n, recipients),
    sinkN: SINK_N,
  });
}
if (SECTIONS.has('postgres')) await benchPostgres();
console.log(`\nload average at the end: ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
