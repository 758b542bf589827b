// Raven benchmarks: prints figures, never asserts. `npm run bench` (BENCH_SECONDS=10 by default).
import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import nodemailer from 'nodemailer';
import { SMTPServer } from 'smtp-server';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const E2E_N = Number(process.env.BENCH_E2E_N ?? 500);
const CLI_RUNS = Number(process.env.BENCH_CLI_RUNS ?? 10);

const mb = (b: number) => `${(b / 1024 / 1024).toFixed(0)} MB`;
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const median = (xs: number[]) => pct([...xs].sort((a, b) => a - b), 50);

// ---------- targets in child processes ----------
interface Target { url: string; apiKey: string; domain: string; child: ChildProcess; dir: string }

async function startTarget(kind: 'node' | 'sqlite' | 'relay'): Promise<Target> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `raven-bench-${kind}-`));
  const child = fork(path.join(here, 'target.ts'), [kind, dir], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const info: any = await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`target ${kind} exited ${code}`)));
  });
  return { url: info.url, apiKey: info.apiKey, domain: info.domain, child, dir };
}

async function stopTarget(t: Target): Promise<number> {
  const reply: any = await new Promise((resolve) => {
    t.child.once('message', resolve);
    t.child.send('stop');
  });
  await new Promise((r) => (t.child.exitCode !== null ? r(null) : t.child.once('exit', r)));
  await rm(t.dir, { recursive: true, force: true });
  return reply.peakRss;
}

function message(domain: string, i = 0) {
  const body = {
    from: `Bench <sender@${domain}>`,
    to: [`user1@${domain}`, `user2@${domain}`, `user3@${domain}`],
    subject: `Your receipt #${i}`,
    text: 'Thanks for your order. '.repeat(38),
    tags: { category: 'receipt' },
  };
  return JSON.stringify(body);
}

// ---------- 1. admission ----------
interface Load { name: string; rps: number; p50: number; p99: number; non2xx: number; errors: number; total: number; peakRss: number }

async function load(kind: 'node' | 'sqlite' | 'relay', name: string): Promise<Load> {
  const t = await startTarget(kind);
  const bodyStr = message(t.domain);
  const opts = {
    url: t.url,
    connections: CONNECTIONS,
    requests: [
      {
        method: 'POST' as const,
        path: '/v1/emails',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${t.apiKey}` },
        body: bodyStr,
      },
    ],
  };
  const probe = await fetch(`${t.url}/v1/emails`, { method: 'POST', headers: opts.requests[0].headers, body: bodyStr });
  if (probe.status !== 202) console.log(`  (warning: ${name} answered ${probe.status}: ${await probe.text()})`);
  else await probe.arrayBuffer();
  await autocannon({ ...opts, duration: 1 }); // warm-up, not reported
  const r = await autocannon({ ...opts, duration: SECONDS });
  const peakRss = await stopTarget(t);
  return {
    name,
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    total: r.requests.total,
    peakRss,
  };
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

async function e2eRelay() {
  const t = await startTarget('relay');
  const auth = { authorization: `Bearer ${t.apiKey}` };
  const start = Date.now();
  const ids = await pool(E2E_N, 20, async (i) => {
    const res = await fetch(`${t.url}/v1/emails`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: message(t.domain, i),
    });
    const b: any = await res.json();
    if (res.status !== 202 && res.status !== 200) throw new Error(`send ${res.status} ${JSON.stringify(b)}`);
    return b.id as string;
  });
  const admittedMs = Date.now() - start;
  // Poll the list with status=delivered until every email is there.
  const deadline = Date.now() + 60_000;
  let delivered = 0;
  while (Date.now() < deadline) {
    delivered = 0;
    let cursor: string | null = null;
    do {
      const q: string = `${t.url}/v1/emails?status=delivered&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page: any = await (await fetch(q, { headers: auth })).json();
      delivered += page.emails.length;
      cursor = page.next_cursor;
    } while (cursor);
    if (delivered >= E2E_N) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const wallMs = Date.now() - start;
  // Exact admission -> delivered from the server's own timestamps.
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
  await stopTarget(t);
  lat.sort((a, b) => a - b);
  return { delivered, admittedMs, wallMs, p50: pct(lat, 50), p99: pct(lat, 99), perSec: lat.length / ((lastDelivered - firstCreated) / 1000), counted: lat.length };
}

async function e2eCeiling() {
  let received = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    onData(stream, _session, cb) {
      stream.on('data', () => {});
      stream.on('end', () => {
        received++;
        cb();
      });
    },
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.server.address() as any).port;
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true, pool: true, maxConnections: 8, maxMessages: Infinity });
  const start = Date.now();
  const lat = await pool(E2E_N, 20, async (i) => {
    const t0 = Date.now();
    const m = JSON.parse(message('example.test', i));
    await transport.sendMail({ from: m.from, to: m.to, subject: m.subject, text: m.text });
    return Date.now() - t0;
  });
  const wallMs = Date.now() - start;
  transport.close();
  await new Promise<void>((r) => server.close(() => r()));
  lat.sort((a, b) => a - b);
  return { received, p50: pct(lat, 50), p99: pct(lat, 99), perSec: E2E_N / (wallMs / 1000) };
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

// ---------- main ----------
console.log(`Raven bench: node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model}), ${mb(os.totalmem())} RAM`);
console.log(`admission: ${CONNECTIONS} connections, ${SECONDS}s per target (+1s warm-up), ~${message('x.test').length} B JSON, 3 recipients\n`);

const results: Load[] = [];
for (const [kind, name] of [['node', 'bare node:http (JSON parse, 202)'], ['sqlite', 'sqlite3 group commit (WAL, FULL)'], ['relay', 'raven relay POST /v1/emails']] as const) {
  const r = await load(kind, name);
  results.push(r);
  console.log(
    `${r.name.padEnd(36)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${String(r.p50).padStart(4)} ms  p99 ${String(r.p99).padStart(4)} ms  ` +
      `total ${r.total}  non2xx ${r.non2xx}  errors ${r.errors}  peak RSS ${mb(r.peakRss)}`,
  );
}
const [nodeR, sqliteR, relayR] = results;
console.log(`\nrelay / node ceiling:    ${((relayR.rps / nodeR.rps) * 100).toFixed(1)}%`);
console.log(`relay / sqlite ceiling:  ${((relayR.rps / sqliteR.rps) * 100).toFixed(1)}%   (target >= 60%)`);
console.log(`relay p99:               ${relayR.p99} ms   (target < 50 ms)`);
console.log(`relay peak RSS:          ${mb(relayR.peakRss)}`);

console.log(`\nend to end: ${E2E_N} emails x 3 recipients, 20 concurrent senders`);
const e = await e2eRelay();
console.log(
  `raven relay -> sink      delivered ${e.counted}/${E2E_N}  admission->delivered p50 ${e.p50} ms  p99 ${e.p99} ms  ` +
    `${e.perSec.toFixed(0)} delivered/s  (all admitted in ${e.admittedMs} ms, all seen delivered after ${e.wallMs} ms)`,
);
const c = await e2eCeiling();
console.log(`nodemailer pool -> smtp-server  received ${c.received}/${E2E_N}  send p50 ${c.p50} ms  p99 ${c.p99} ms  ${c.perSec.toFixed(0)} msgs/s`);
console.log(`relay / nodemailer ceiling: ${((e.perSec / c.perSec) * 100).toFixed(1)}%`);

console.log(`\nCLI start-up, median of ${CLI_RUNS} runs:`);
const base = timeCmd(['-e', '0']);
const ver = timeCmd(['dist/cli/main.js', '--version']);
const dry = timeCmd(['dist/cli/main.js', 'send', '--dry-run', '--from', 'a@example.test', '--to', 'b@example.test', '--subject', 's', '--text', 't', '--api-key', 'rr_test_x']);
console.log(`node -e 0                 ${base.toFixed(0)} ms`);
console.log(`ravenctl --version        ${ver.toFixed(0)} ms  (+${(ver - base).toFixed(0)} ms over node)`);
console.log(`ravenctl send --dry-run   ${dry.toFixed(0)} ms  (+${(dry - base).toFixed(0)} ms over node)`);
