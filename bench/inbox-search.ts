// The inbox search language at 100,000 captured messages, a section of `npm run bench`
// (BENCH_ONLY=search), on SQLite and on PostgreSQL: every term of the language (issue 23), alone,
// positive and negated, p50/p99 of sequential GETs /admin/v1/inbox?q=..., printed beside the
// target (p99 < 50 ms) with the load average; and the unread counts per project
// (/admin/v1/inbox/unread) the inbox's project selector asks on every live frame. Beside them the
// CPU time per request of the relay process (and of the PostgreSQL backends serving it): what the
// query costs whatever else the machine runs, where a p99 on a busy machine is the scheduler's.
// The data: bench/dashboard-target.ts (its header says what matches what).
// Knobs: BENCH_SEARCH_MESSAGES (100000), BENCH_SEARCH_SAMPLES (200), BENCH_SEARCH_BACKENDS
// (sqlite,postgres), BENCH_DATABASE_URL (a PostgreSQL server to use instead of a fresh one),
// BENCH_SEARCH_CASES (only the lines whose name or q holds one of these comma-separated strings).
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createTestDatabase, startPostgresServer } from '../test/helpers/postgres-server.js';
import { figures, startTarget, type Target } from './dashboard.js';
import { serverTreeCpuSeconds } from './process-cpu.js';

const MESSAGES = Number(process.env.BENCH_SEARCH_MESSAGES ?? 100_000);
const SAMPLES = Number(process.env.BENCH_SEARCH_SAMPLES ?? 200);
const WARM_UP = 10;
const BACKENDS = (process.env.BENCH_SEARCH_BACKENDS ?? 'sqlite,postgres').split(',').map((b) => b.trim());
const TARGET_P99_MS = 50;
const ONLY = process.env.BENCH_SEARCH_CASES?.split(',').filter((c) => c !== '');

/** [what it is, how much of the mail it matches, q]. */
export const CASES: Array<[string, string]> = [
  ['(no q: the first page)', ''],
  ['free text, common (all)', 'order'],
  ['free text, rare (1)', '"order 4242."'],
  ['free text, none', 'no-such-text'],
  // Terms of one or two characters (their own index, 0020): none, every message, a ninth of the
  // mail but only its oldest fifth (a newest-first walk passes 80,000 first), 2 % spread evenly,
  // combined with a field term, and negated (nothing excluded; everything excluded: the index
  // answers both, 0024).
  ['free text, two characters, none', 'zq'],
  ['free text, one character, every message', 'e'],
  ['free text, two characters, the oldest ninth only', '" 1"'],
  ['free text, two characters (2 %)', 'r7'],
  ['free text, two characters, and from: (none)', 'zq from:billing'],
  ['-free text (none excluded)', '-zq'],
  ['-free text, one character (all excluded)', '-e'],
  ['-free text, one character, and tag: (all excluded)', 'tag:receipt -e'],
  ['free text and -free text, one character (all excluded)', 'order -e'],
  // Field terms of one or two characters: their field's tagged grams in the same index (0025).
  ['-from:, one character (all excluded)', '-from:e'],
  ['-subject:, two characters (all excluded)', '-subject:re'],
  ['-to:, one character (none excluded)', '-to:z'],
  ['from:, one character (a quarter)', 'from:g'],
  ['subject:, two characters (none) and -from:', 'subject:zq -from:e'],
  // What no index answers: a negated term of three characters or more. Free text: checked in
  // inbox_search_text's narrow rows (0026): all excluded (every entry checked), one excluded, none
  // excluded; and beside a flag.
  ['-free text, longer (all excluded: every entry checked)', '-order'],
  ['-free text, longer (one excluded)', '-"order 4242."'],
  ['-free text, longer (none excluded)', '-no-such-text'],
  ['-free text, longer, and is:read (all excluded)', '-order is:read'],
  // Negated field terms of three characters or more: checked in inbox_search_fields' narrow rows (0028).
  ['-from:, longer (none excluded)', '-from:order'],
  ['-subject:, longer (all excluded: a scan)', '-subject:receipt'],
  ['-to:, longer (all excluded: a scan)', '-to:example'],
  ['from: (a quarter)', 'from:billing'],
  ['-from: (three quarters)', '-from:billing'],
  ['to: (1/500)', 'to:user42@'],
  ['-to: (499/500)', '-to:user42@'],
  ['subject: quoted, rare', 'subject:"receipt #7 "'],
  ['-subject: (all but one)', '-subject:"receipt #7 "'],
  ['is:unread (half)', 'is:unread'],
  ['is:read (half)', 'is:read'],
  ['-is:unread (half)', '-is:unread'],
  ['has:attachment (1 %)', 'has:attachment'],
  ['-has:attachment (99 %)', '-has:attachment'],
  ['after: a date (14 %, newest)', 'after:2026-11-02'],
  ['before: a date (86 %)', 'before:2026-11-02'],
  ['before: an ISO time (0.3 %, oldest)', 'before:2026-11-01T00:05:00Z'],
  ['-after: an ISO time (0.3 %, oldest)', '-after:2026-11-01T00:05:00Z'],
  ['larger:10k (1 %)', 'larger:10k'],
  ['smaller:1k (none)', 'smaller:1k'],
  ['-larger:10k (99 %)', '-larger:10k'],
  ['project: (a quarter)', 'project:prj_bench_a'],
  ['project: unknown (none)', 'project:prj_nobody'],
  ['-project: (three quarters)', '-project:prj_bench_a'],
  ['tag: (two thirds)', 'tag:receipt'],
  ['tag:name=value (a third)', 'tag:plan=pro'],
  ['tag: rare (10 messages)', 'tag:vip'],
  ['tag: none', 'tag:no-such-tag'],
  ['-tag: (a third)', '-tag:receipt'],
  ['message-id: (1)', 'message-id:receipt-4242@shop.test'],
  ['message-id:<...> (1)', 'message-id:<receipt-4242@shop.test>'],
  ['-message-id: (all but one)', '-message-id:receipt-4242@shop.test'],
  ['tag: and free text (10 messages)', 'tag:plan=pro "order 42"'],
  ['tag: and from: and is:unread (a twelfth)', 'tag:receipt from:alice is:unread'],
];

/** CPU milliseconds used so far by the relay process, and by the database's backends (PostgreSQL). */
type CpuClock = () => Promise<number>;

function relayCpu(t: Target): CpuClock {
  return async () => {
    const { user, system } = await t.ask<NodeJS.CpuUsage>('cpu');
    return (user + system) / 1000;
  };
}

/**
 * The CPU time of the PostgreSQL server serving the database: its postmaster and every process it
 * started, ended ones included (bench/process-cpu.ts: serverTreeCpuSeconds), so a backend that
 * ends between two readings (the pool closes idle ones) neither loses its time nor, as summing the
 * live backends did, subtracts it (-88.1 ms for -tag:receipt); parallel workers count too. Only
 * for a server on this machine (/proc): otherwise undefined, and no column is printed.
 */
async function postgresCpu(url: string): Promise<CpuClock | undefined> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  const stat = await readFile(`/proc/${rows[0]!.pid}/stat`, 'utf8').catch(() => ''); // while the backend lives
  await client.end();
  const postmaster = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  if (!(postmaster > 1) || Number.isNaN(serverTreeCpuSeconds(postmaster))) return undefined;
  return async () => serverTreeCpuSeconds(postmaster) * 1000;
}

async function timed(t: Target, pathAndQuery: string, clocks: CpuClock[]): Promise<{ times: number[]; cpuMs: number[] }> {
  const headers = { authorization: `Bearer ${t.adminToken}` };
  const times: number[] = [];
  let cpuBefore: number[] = [];
  for (let i = 0; i < WARM_UP + SAMPLES; i++) {
    if (i === WARM_UP) cpuBefore = await Promise.all(clocks.map((c) => c()));
    const started = performance.now();
    const res = await fetch(`${t.url}${pathAndQuery}`, { headers });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${pathAndQuery} answered ${res.status}`);
    if (i >= WARM_UP) times.push(performance.now() - started);
  }
  const cpuAfter = await Promise.all(clocks.map((c) => c()));
  return { times, cpuMs: cpuAfter.map((after, i) => (after - cpuBefore[i]!) / SAMPLES) };
}

function line(name: string, { times, cpuMs }: { times: number[]; cpuMs: number[] }): string {
  const sorted = [...times].sort((a, b) => a - b);
  const p99 = sorted[Math.min(sorted.length - 1, Math.floor(0.99 * sorted.length))]!;
  const verdict = p99 < TARGET_P99_MS ? 'met' : 'MISSED';
  const cpu = cpuMs.map((ms) => ms.toFixed(1)).join(' + ');
  return `  ${name.padEnd(52)} ${figures(times)}  target p99 < ${TARGET_P99_MS} ms: ${verdict.padEnd(6)}  cpu/request ${cpu} ms  load ${os.loadavg()[0]!.toFixed(1)}`;
}

const GRAM_VARIANTS = { none: 'none', text: 'free-text grams (0020)', all: 'free-text and field grams (0025)' } as const;
const GRAM_ENTRIES = Math.min(2_000, MESSAGES);
const GRAM_ROUNDS = 6;

/**
 * What the index of short terms costs the writer: the newest GRAM_ENTRIES entries' grams
 * computed and written again (bench/dashboard-target.ts: rewriteGrams) as none, the free-text
 * grams, or those and the field grams, in interleaved rounds (a ratio the machine's load
 * disturbs less); CPU µs per entry of the relay (and of PostgreSQL) for each variant.
 */
async function gramsWriteCost(t: Target, clocks: CpuClock[]): Promise<Record<keyof typeof GRAM_VARIANTS, number[]>> {
  const spent = { none: clocks.map(() => 0), text: clocks.map(() => 0), all: clocks.map(() => 0) };
  const variants = ['none', 'text', 'all'] as const;
  // Round -1 is not counted: the first rewrite of the fill's grams paid for the fill's pending
  // merges (SQLite once printed 982 µs for the free-text grams against 252 with the field grams too).
  for (let round = -1; round < GRAM_ROUNDS; round++) {
    // Each round in another order: FTS5's merges and PostgreSQL's pending GIN list charge a write for the ones before it.
    const first = (round + 3) % 3;
    for (const variant of [...variants.slice(first), ...variants.slice(0, first)]) {
      const before = await Promise.all(clocks.map((c) => c()));
      await t.ask('grams', { variant, count: GRAM_ENTRIES });
      const after = await Promise.all(clocks.map((c) => c()));
      if (round >= 0) after.forEach((ms, i) => (spent[variant][i]! += ((ms - before[i]!) * 1000) / GRAM_ENTRIES / GRAM_ROUNDS));
    }
  }
  return spent;
}

async function oneBackend(backend: string, database?: string): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `raven-bench-search-${backend}-`));
  try {
    const server = database ? await postgresCpu(database) : undefined;
    const serverBefore = server ? await server() : 0;
    const t = await startTarget(dir, { messages: MESSAGES, ...(database ? { database } : {}) });
    const fillCpu = [t.fillCpuMs, ...(server ? [(await server()) - serverBefore] : [])];
    const clocks = [relayCpu(t), ...(server ? [server] : [])];
    const us = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(' + ');
    console.log(
      `  ${backend}: filled in ${(t.fillMs / 1000).toFixed(1)} s (CPU per message ${us(fillCpu.map((ms) => (ms * 1000) / MESSAGES))} µs); ` +
        `load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}; cpu/request: relay${server ? ' + PostgreSQL (the server and all its processes)' : ''}`,
    );
    for (const [name, q] of CASES.filter(([n, q]) => ONLY === undefined || ONLY.some((c) => n.includes(c) || q.includes(c)))) console.log(line(`${name}${q ? `  ${q}` : ''}`, await timed(t, `/admin/v1/inbox${q ? `?q=${encodeURIComponent(q)}` : ''}`, clocks)));
    console.log(line('unread per project (/admin/v1/inbox/unread)', await timed(t, '/admin/v1/inbox/unread', clocks)));
    const grams = await gramsWriteCost(t, clocks);
    const added = grams.all.map((x, i) => x - grams.text[i]!);
    console.log(
      `  write cost of the index of short terms (${GRAM_ENTRIES} entries' grams rewritten, ${GRAM_ROUNDS} interleaved rounds), CPU µs per entry, relay${server ? ' + PostgreSQL' : ''}: ` +
        `${Object.entries(GRAM_VARIANTS).map(([v, name]) => `${name} ${us(grams[v as keyof typeof GRAM_VARIANTS])}`).join('; ')}; ` +
        `the field grams add ${us(added)} µs per entry (the fill: ${us(fillCpu.map((ms) => (ms * 1000) / MESSAGES))} µs per message); load ${os.loadavg()[0]!.toFixed(1)}`,
    );
    await t.ask('stop');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function searchBench(): Promise<void> {
  console.log(`\ninbox search: ${MESSAGES} captured messages written into the relay's tables; ${SAMPLES} sequential GETs per line (after ${WARM_UP} not counted), round trips on loopback`);
  for (const backend of BACKENDS) {
    if (backend === 'sqlite') {
      await oneBackend('sqlite');
      continue;
    }
    const server = process.env.BENCH_DATABASE_URL ? undefined : await startPostgresServer({ durable: true });
    try {
      const db = await createTestDatabase(process.env.BENCH_DATABASE_URL ?? server!.url);
      try {
        await oneBackend('postgres', db.url);
      } finally {
        await db.drop();
      }
    } finally {
      await server?.stop();
    }
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await searchBench();
