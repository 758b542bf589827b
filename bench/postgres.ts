// PostgreSQL figures for `npm run bench` (section `postgres`), or alone:
// `node --import tsx bench/postgres.ts`. Prints, never asserts.
//
// - admission (limits lifted, 1-recipient emails, fresh Idempotency-Keys, BENCH_CONNECTIONS
//   client connections spread over the relays) for 1 and 20 workspaces through 1 and 3 relay
//   processes on one database, against the same machine's PostgreSQL ceiling: a minimal Node
//   server inserting the same rows per request (the email, its recipient, its job, its event, its
//   idempotency key, the usage counters of its workspace and key) in one transaction, through a
//   pool of the same size; each beside the CPU every process used and the load average;
// - the specification's limits: one workspace, two live keys, three relays: accepted a second,
//   sustained and in the fullest second (the workspace's window is 200 a second);
// - end to end with three relays: emails sent round-robin, until every recipient is delivered.
// The server is a fresh one with fsync on (commits durable, as in production), in a temporary
// directory, unless BENCH_DATABASE_URL names one (a role that may create databases).
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { openPostgres } from '../relay/storage/postgres/db.js';
import { createTestDatabase, startPostgresServer } from '../test/helpers/postgres-server.js';
import { startRelayProcess, type RelayProcess } from '../test/helpers/relay-process.js';
import { fullestWindow } from '../test/helpers/sliding-window.js';
import { childPids, cpuSeconds, settled } from './process-cpu.js';

const here = fileURLToPath(import.meta.url);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 48);
// Load before each target's window, not counted: a fresh relay's first seconds are the JIT compiling
// its admission path (the SQLite admission bench measured 0.77 against 0.52 CPU ms a request after
// 1 s and 5 s of warm-up, issue 24, session 11).
const WARM_UP = Number(process.env.BENCH_WARMUP_SECONDS ?? 5);
const E2E_N = Number(process.env.BENCH_E2E_N ?? 500);
const WORKSPACES = 20;
const POOL = 10; // the relay's pool size (relay/storage/postgres/db.ts)
/** Which parts run (BENCH_PG_PARTS=ceiling,admission,spec,e2e; all by default); BENCH_PG_WS and BENCH_PG_RELAYS pick admission's targets. */
const PARTS = new Set((process.env.BENCH_PG_PARTS ?? 'ceiling,admission,spec,e2e').split(',').map((x) => x.trim()));
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
/**
 * BENCH_PG_STATEMENTS=1: a diagnostic (not the judged figures: it costs PostgreSQL a little on
 * every statement): the server loads pg_stat_statements, and each target also prints what the
 * database did per accepted request over its window (statements, transactions, notifications).
 */
const STATEMENTS = process.env.BENCH_PG_STATEMENTS === '1';
/**
 * BENCH_PG_WAITS=1: a diagnostic too (its sampling costs CPU): pg_stat_activity sampled every
 * 20 ms over each target's window, and what the active backends were waiting on, on average
 * (lock waits on the counters' rows, the WAL's flush, a client's next statement ...).
 */
const WAITS = process.env.BENCH_PG_WAITS === '1';

/** An API key and a verified domain of its project: who sends, from where, to whom. */
interface Sender {
  key: string;
  domain: string;
}

function message(domain: string, i = 0) {
  return JSON.stringify({
    from: `Bench <sender@${domain}>`,
    to: `user${i % 7}@${domain}`,
    subject: `Your receipt #${i}`,
    text: 'Thanks for your order. '.repeat(38),
    tags: { category: 'receipt' },
  });
}

// ---------- the ceiling: a minimal server inserting the same rows ----------
async function serveCeiling(url: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: url, max: POOL });
  // The tenancy rows the emails refer to, as a bootstrap would write them: workspace w<i>, its
  // project p<i> and its key k<i>, which the request's Bearer token names.
  const at = new Date().toISOString();
  const month = at.slice(0, 7);
  for (let i = 0; i < WORKSPACES; i++) {
    await pool.query('INSERT INTO workspaces (id, name, created_at) VALUES ($1, $1, $2)', [`w${i}`, at]);
    await pool.query("INSERT INTO projects (id, workspace_id, name, environment, created_at) VALUES ($1, $2, $1, 'development', $3)", [`p${i}`, `w${i}`, at]);
    await pool.query(
      "INSERT INTO api_keys (id, project_id, name, prefix, permission, secret_hash, last4, created_at) VALUES ($1, $2, $1, 'rr_test_', 'email:send', $1, 'xxxx', $3)",
      [`k${i}`, `p${i}`, at],
    );
  }
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { from: string; to: string; subject: string; text: string; tags: object };
      const i = String(req.headers.authorization ?? '').replace(/^Bearer k/, '');
      const [w, p, k] = [`w${i}`, `p${i}`, `k${i}`];
      const to = [body.to];
      const now = new Date().toISOString();
      const id = `em_${randomUUID().replace(/-/g, '').slice(0, 26)}`;
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const { rows } = await client.query(
          `INSERT INTO emails (id, project_id, workspace_id, key_id, status, from_address, to_json, cc_json, bcc_json, subject, text_body,
             tags_json, test_mode, created_at, updated_at) VALUES ($1, $8, $9, $10, 'queued', $2, $3, '[]', '[]', $4, $5, $6, 1, $7, $7) RETURNING seq`,
          [id, body.from, JSON.stringify(to), body.subject, body.text, JSON.stringify(body.tags), now, p, w, k],
        );
        await client.query(
          `INSERT INTO recipients (email_id, email_seq, position, address, address_lc, type, status, updated_at)
           SELECT $1, $2, n - 1, a, lower(a), 'to', 'queued', $3 FROM unnest($4::text[]) WITH ORDINALITY AS t(a, n)`,
          [id, rows[0].seq, now, to],
        );
        await client.query("INSERT INTO jobs (email_id, state, run_at, attempts, created_at, updated_at) VALUES ($1, 'ready', $2, 0, $2, $2)", [id, now]);
        await client.query("INSERT INTO events (id, email_id, project_id, type, payload_json, occurred_at) VALUES ($1, $2, $4, 'email.queued', '{}', $3)", [
          `evt_${id.slice(3)}`,
          id,
          now,
          p,
        ]);
        await client.query(
          "INSERT INTO idempotency_keys (project_id, key, body_hash, email_id, status_code, response_json, created_at, expires_at) VALUES ($4, $1, 'h', $2, 202, '{}', $3, $3)",
          [String(req.headers['idempotency-key'] ?? id), id, now, p],
        );
        await client.query(
          'INSERT INTO usage_counters (scope, month, used) VALUES ($1, $3, 1), ($2, $3, 1) ON CONFLICT (scope, month) DO UPDATE SET used = usage_counters.used + excluded.used',
          [`ws:${w}`, `key:${k}`, month],
        );
        await client.query('COMMIT');
        res.writeHead(202, { 'content-type': 'application/json' }).end(JSON.stringify({ id, status: 'queued', test_mode: true }));
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        res.writeHead(500).end(String(error));
      } finally {
        client.release();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.send!({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}` });
  process.on('message', async () => {
    server.close();
    await pool.end();
    process.exit(0);
  });
}

// ---------- CPU of each process ----------
/** Seconds a process's threads spent runnable but waiting for a CPU (schedstat), 0 once it is gone. */
function runDelaySeconds(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/task`).reduce((n, tid) => n + Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[1]) / 1e9, 0);
  } catch {
    return 0;
  }
}

/** utime + stime of a process in seconds, 0 once it is gone (PostgreSQL's backends come and go). */
const cpuOrZero = (pid: number | string): number => {
  const seconds = cpuSeconds(pid);
  return Number.isNaN(seconds) ? 0 : seconds;
};

/** A process's title (PostgreSQL's say what each is: `postgres: walwriter`, `postgres: user db [local] idle`), '' once it is gone. */
function processTitle(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
  } catch {
    return '';
  }
}

/** The PostgreSQL server's processes: the postmaster and its children. */
function postgresPids(postmaster: number | undefined): number[] {
  return postmaster === undefined ? [] : [postmaster, ...childPids(postmaster)];
}

/** The server's postmaster (its processes' parent), when url's role is its superuser. */
export async function postmasterPid(url: string): Promise<number | undefined> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query("SELECT split_part(pg_read_file('postmaster.pid'), E'\\n', 1) AS pid");
    return Number(rows[0].pid);
  } catch {
    return undefined; // not a superuser of a server of our own: its CPU is not shown
  } finally {
    await client.end();
  }
}


interface Processes {
  relays: number[];
  postmaster?: number;
}

/** CPU seconds of a relay's main thread (the event loop: its thread id is the process's), 0 once it is gone. */
const mainThreadSeconds = (pid: number): number => cpuOrZero(`${pid}/task/${pid}`);

/**
 * CPU of each relay, of PostgreSQL (all its processes) and of this load generator over fn: % of
 * one core, and seconds in all; and the seconds of the relays' main threads.
 */
async function measuringCpu<T>(
  processes: Processes,
  fn: () => Promise<T>,
): Promise<{ value: T; cpu: string; cpuSeconds: number; relaySeconds: number; pgSeconds: number; pgKinds: Map<string, number>; mainSeconds: number; load: string }> {
  const pgPids = postgresPids(processes.postmaster);
  const before = {
    relays: processes.relays.map(cpuOrZero),
    main: processes.relays.map(mainThreadSeconds),
    waits: processes.relays.map(runDelaySeconds),
    pg: pgPids.map(cpuOrZero),
    self: process.cpuUsage(),
    at: performance.now(),
  };
  const value = await fn();
  const seconds = (performance.now() - before.at) / 1000;
  const pct = (s: number) => `${((s / seconds) * 100).toFixed(0)}%`;
  const relaySeconds = processes.relays.map((pid, i) => cpuOrZero(pid) - before.relays[i]!);
  const mainSeconds = processes.relays.reduce((n, pid, i) => n + mainThreadSeconds(pid) - before.main[i]!, 0);
  // Children started meanwhile (new connections) count from 0.
  const pgNow = postgresPids(processes.postmaster);
  const pgSpent = pgNow.map((pid) => [pid, cpuOrZero(pid) - (before.pg[pgPids.indexOf(pid)] ?? 0)] as const);
  const pgSeconds = pgSpent.reduce((n, [, x]) => n + x, 0);
  // PostgreSQL's CPU by kind of process (its title: the relays' backends, the WAL writer, autovacuum ...).
  const pgKinds = new Map<string, number>();
  for (const [pid, x] of pgSpent) {
    const kind = pid === processes.postmaster ? 'postmaster' : processTitle(pid).replace(/^postgres: /, '').replace(/^\S+ \S+ (\[local\]|[\d.:]+\(\d+\)).*$/, 'backends').replace(/ worker.*/, '');
    pgKinds.set(kind, (pgKinds.get(kind) ?? 0) + x);
  }
  const self = process.cpuUsage(before.self);
  const selfSeconds = (self.user + self.system) / 1e6;
  // Time a relay was ready to run but waited for a core: what a busy machine takes from it.
  const waited = processes.relays.map((pid, i) => pct(runDelaySeconds(pid) - before.waits[i]!));
  const cpu =
    `CPU relays ${relaySeconds.map(pct).join(' ')}${processes.postmaster === undefined ? '' : `, pg ${pct(pgSeconds)}`}, load generator ${pct(selfSeconds)}; ` +
    `relays waited for a core ${waited.join(' ')}`;
  const relaysAll = relaySeconds.reduce((n, x) => n + x, 0);
  return { value, cpu, cpuSeconds: relaysAll + pgSeconds, relaySeconds: relaysAll, pgSeconds, pgKinds, mainSeconds, load: os.loadavg().map((l) => l.toFixed(1)).join(' ') };
}

// ---------- what the database did (BENCH_PG_STATEMENTS=1) ----------
interface Diagnosis {
  /** Lines to print under the target's figures. */
  report(accepted: number): Promise<string>;
}

/** Counts the statements (pg_stat_statements) and notifications of the database at url from now on. */
async function diagnose(url: string): Promise<Diagnosis> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const notified = { count: 0, bytes: 0, stored: 0 };
  client.on('notification', (m) => {
    notified.count++;
    notified.bytes += Buffer.byteLength(m.payload ?? '');
    if (m.payload?.startsWith('@')) notified.stored++;
  });
  await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  await client.query('LISTEN raven');
  await client.query('SELECT pg_stat_statements_reset()');
  return {
    async report(accepted) {
      try {
        const { rows } = await client.query<{ query: string; calls: number; plans: number; ms: number; rows: number; plan: number; jit: number }>(
          `SELECT query, calls::int AS calls, plans::int AS plans, total_exec_time AS ms, rows::int AS rows, total_plan_time AS plan,
                  jit_generation_time + jit_inlining_time + jit_optimization_time + jit_emission_time AS jit FROM pg_stat_statements
            WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) ORDER BY calls DESC`,
        );
        const per = (n: number) => (n / Math.max(1, accepted)).toFixed(3);
        const calls = rows.reduce((n, r) => n + r.calls, 0);
        const commits = rows.filter((r) => /^commit/i.test(r.query.trim())).reduce((n, r) => n + r.calls, 0);
        const lines = [
          `  database per accepted request: ${per(calls)} statements, ${per(commits)} COMMITs, ${per(rows.reduce((n, r) => n + r.ms, 0))} ms executing; ` +
            `${per(rows.reduce((n, r) => n + r.plan, 0))} ms planning, ${per(rows.reduce((n, r) => n + r.jit, 0))} ms compiling (JIT); ` +
            `${per(notified.count)} notifications (${(notified.bytes / Math.max(1, notified.count)).toFixed(0)} bytes each, ${notified.stored} stored as rows)`,
          ...rows.slice(0, 45).map((r) => `    ${per(r.calls).padStart(7)} calls ${(r.ms / Math.max(1, r.calls)).toFixed(3).padStart(7)} ms (plan ${(r.plan / Math.max(1, r.calls)).toFixed(3)} in ${((100 * r.plans) / Math.max(1, r.calls)).toFixed(0)} % of calls, jit ${(r.jit / Math.max(1, r.calls)).toFixed(1)}) ${String(r.rows).padStart(7)} rows  ${r.query.replace(/\s+/g, ' ').slice(0, 110)}`),
        ];
        return lines.join('\n');
      } finally {
        await client.end();
      }
    },
  };
}

/** Samples what the database's active backends wait on, from now until report(). */
async function sampleWaits(url: string): Promise<{ report(): Promise<string> }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const seen = new Map<string, number>();
  let samples = 0;
  let stopped = false;
  const sampling = (async () => {
    while (!stopped) {
      const { rows } = await client.query<{ what: string }>(
        `SELECT COALESCE(wait_event_type || ':' || wait_event, 'CPU') || '  ' || left(regexp_replace(query, '\\s+', ' ', 'g'), 60) AS what
           FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid()`,
      );
      samples++;
      for (const r of rows) seen.set(r.what, (seen.get(r.what) ?? 0) + 1);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  return {
    async report() {
      stopped = true;
      await sampling;
      await client.end();
      const stats = new pg.Client({ connectionString: url });
      await stats.connect();
      const byWait = new Map<string, number>();
      for (const [what, n] of seen) byWait.set(what.split('  ')[0]!, (byWait.get(what.split('  ')[0]!) ?? 0) + n);
      const avg = (n: number) => (n / Math.max(1, samples)).toFixed(2);
      const tables = await stats.query<{ t: string }>(
        `SELECT relname || ' ' || n_tup_upd || ' updates (' || n_tup_hot_upd || ' HOT), ' || n_dead_tup || ' dead, ' || pg_relation_size(relid) / 8192 || ' pages, index ' ||
                pg_indexes_size(relid) / 8192 || ' pages' AS t
           FROM pg_stat_user_tables WHERE relname IN ('rate_windows', 'usage_counters', 'counter_reservations') ORDER BY relname`,
      );
      await stats.end();
      return [
        `  active backends on average (${samples} samples): ${[...byWait].sort((a, b) => b[1] - a[1]).map(([w, n]) => `${w} ${avg(n)}`).join(', ')}`,
        `  counters' tables since the database was made: ${tables.rows.map((r) => r.t).join('; ')}`,
        ...[...seen].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([what, n]) => `    ${avg(n).padStart(5)}  ${what}`),
      ].join('\n');
    },
  };
}

// ---------- load ----------
interface Load {
  rps: number;
  accepted: number;
  p50: number;
  p99: number;
  non2xx: number;
  /** Recipients delivered a second while the load ran (delivery shares the cores with admission). */
  deliveredPerSecond: number;
  /** Answers by status code. */
  statuses: Record<string, number>;
  cpu: string;
  /** CPU ms of the relays and PostgreSQL together per accepted request. */
  cpuMsPerAccepted: number;
  /** CPU ms of the relays' main threads (their event loops) per accepted request. */
  mainMsPerAccepted: number;
  /** CPU ms of the relays (every thread) and of PostgreSQL (every process) per accepted request, apart. */
  relayMsPerAccepted: number;
  pgMsPerAccepted: number;
  /** PostgreSQL's CPU ms per accepted request by kind of process. */
  pgKinds: string;
  load: string;
  /** What the database did (BENCH_PG_STATEMENTS=1), else ''. */
  database: string;
}

let idempotencyCounter = 0;

/** CONNECTIONS spread over the URLs, for SECONDS (after WARM_UP seconds of the same load), each request from the next sender; the URLs' sum. */
async function load(urls: string[], senders: Sender[], processes: Processes, databaseUrl?: string): Promise<Load> {
  const bodies = senders.map((s) => message(s.domain));
  let turn = 0;
  const run = (url: string, duration: number) =>
    autocannon({
      url,
      connections: Math.max(1, Math.round(CONNECTIONS / urls.length)),
      duration,
      requests: [
        {
          method: 'POST',
          path: '/v1/emails',
          headers: { 'content-type': 'application/json' },
          setupRequest: (req: any) => {
            const i = turn++ % senders.length;
            return {
              ...req,
              body: bodies[i],
              headers: { ...req.headers, authorization: `Bearer ${senders[i]!.key}`, 'idempotency-key': `bench-pg-${idempotencyCounter++}` },
            };
          },
        },
      ],
    });
  await settled(processes.relays);
  await Promise.all(urls.map((u) => run(u, WARM_UP)));
  const delivered = async () => {
    if (!databaseUrl) return 0;
    const c = new pg.Client({ connectionString: databaseUrl });
    await c.connect();
    try {
      return (await c.query("SELECT COUNT(*)::int AS n FROM recipients WHERE status = 'delivered'")).rows[0].n as number;
    } finally {
      await c.end();
    }
  };
  const deliveredBefore = await delivered();
  const diagnosis = STATEMENTS && databaseUrl ? await diagnose(databaseUrl) : undefined;
  const waits = WAITS && databaseUrl ? await sampleWaits(databaseUrl) : undefined;
  const { value: results, cpu, cpuSeconds: spent, relaySeconds, pgSeconds, pgKinds, mainSeconds, load: loadavg } = await measuringCpu(processes, () => Promise.all(urls.map((u) => run(u, SECONDS))));
  const deliveredInWindow = (await delivered()) - deliveredBefore;
  const statuses: Record<string, number> = {};
  for (const r of results) for (const [code, n] of Object.entries(r.statusCodeStats ?? {})) statuses[code] = (statuses[code] ?? 0) + (n as { count: number }).count;
  const accepted = results.reduce((n, r) => n + r['2xx'], 0);
  const database = [diagnosis ? await diagnosis.report(accepted) : '', waits ? await waits.report() : ''].filter(Boolean).join('\n');
  return {
    rps: results.reduce((n, r) => n + r.requests.average, 0),
    accepted: results.reduce((n, r) => n + r['2xx'], 0) / SECONDS,
    p50: Math.max(...results.map((r) => r.latency.p50)),
    p99: Math.max(...results.map((r) => r.latency.p99)),
    non2xx: results.reduce((n, r) => n + r.non2xx, 0),
    statuses,
    deliveredPerSecond: deliveredInWindow / SECONDS,
    cpu,
    cpuMsPerAccepted: (spent * 1000) / Math.max(1, accepted),
    mainMsPerAccepted: (mainSeconds * 1000) / Math.max(1, accepted),
    relayMsPerAccepted: (relaySeconds * 1000) / Math.max(1, accepted),
    pgMsPerAccepted: (pgSeconds * 1000) / Math.max(1, accepted),
    pgKinds: [...pgKinds].filter(([, x]) => x > 0).sort((a, b) => b[1] - a[1]).map(([k, x]) => `${k} ${((x * 1000) / Math.max(1, accepted)).toFixed(3)}`).join(', '),
    load: loadavg,
    database,
  };
}

const RELAXED = {
  testKeyPerMinute: 100_000_000,
  keyPerSecond: 100_000_000,
  workspacePerSecond: 100_000_000,
  testKeyMonthlyRecipients: 1_000_000_000,
  workspaceMonthlyRecipients: 1_000_000_000,
};

/** The specification's limits (section 8), as the relay's defaults have them. */
const SPEC = { testKeyPerMinute: 15, keyPerSecond: 100, workspacePerSecond: 200, testKeyMonthlyRecipients: 1_000, workspaceMonthlyRecipients: 5_000 };

interface Relays {
  relays: RelayProcess[];
  sender: Sender;
  workspaceId: string;
  admin(method: string, urlPath: string, body?: unknown): Promise<any>;
}

async function startRelays(databaseUrl: string, n: number, dir: string, limits: object): Promise<Relays> {
  await mkdir(dir, { recursive: true });
  const config = path.join(dir, 'relay.json');
  await writeFile(config, JSON.stringify({ limits }));
  // BENCH_RELAY_ENV='{"NODE_OPTIONS": "--require ..."}': more environment for each relay (a
  // profiler's hook, say: --cpu-prof is not allowed in NODE_OPTIONS).
  const env = process.env.BENCH_RELAY_ENV ? (JSON.parse(process.env.BENCH_RELAY_ENV) as Record<string, string>) : undefined;
  const start = (i: number) =>
    startRelayProcess({
      dataDir: path.join(dir, `relay-${i}`),
      adminToken: ADMIN_TOKEN,
      config,
      extraArgs: ['--database', databaseUrl],
      startTimeoutMs: 60_000,
      env,
    });
  const first = await start(0);
  const rest = await Promise.all(Array.from({ length: n - 1 }, (_, i) => start(i + 1)));
  const boot = first.ready.bootstrap;
  const admin = async (method: string, urlPath: string, body?: unknown) => {
    const res = await fetch(`${first.httpUrl}${urlPath}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await res.json().catch(() => undefined);
    if (!res.ok) throw new Error(`${method} ${urlPath}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  return { relays: [first, ...rest], sender: { key: boot.api_key, domain: boot.domain }, workspaceId: boot.workspace_id, admin };
}

/** A project in the workspace with a verified domain of its own and `keys` keys. */
async function addProject(r: Relays, workspaceId: string, environment: 'development' | 'production', keys: number): Promise<Sender[]> {
  const project = await r.admin('POST', `/admin/v1/workspaces/${workspaceId}/projects`, { name: 'bench', environment });
  const domain = `${project.id.slice(-8).toLowerCase()}.bench.test`;
  const created = await r.admin('POST', `/admin/v1/projects/${project.id}/domains`, { name: domain });
  await r.admin('POST', `/admin/v1/domains/${created.id}/verify`, { force: true });
  const senders: Sender[] = [];
  for (let i = 0; i < keys; i++) senders.push({ key: (await r.admin('POST', `/admin/v1/projects/${project.id}/keys`, { name: `k${i}`, permission: 'email:send' })).key, domain });
  return senders;
}

/** The bootstrap's key, and one development key in each of `n - 1` more workspaces. */
async function workspaceSenders(r: Relays, n: number): Promise<Sender[]> {
  const senders = [r.sender];
  for (let i = 1; i < n; i++) {
    const workspace = await r.admin('POST', '/admin/v1/workspaces', { name: `bench ${i}` });
    senders.push(...(await addProject(r, workspace.id, 'development', 1)));
  }
  return senders;
}

async function withDatabase<T>(serverUrl: string, fn: (url: string) => Promise<T>): Promise<T> {
  const db = await createTestDatabase(serverUrl);
  try {
    return await fn(db.url);
  } finally {
    await db.drop();
  }
}

const line = (name: string, r: Load) =>
  `${name.padEnd(34)} ${r.rps.toFixed(0).padStart(6)} req/s  p50 ${String(r.p50).padStart(4)} ms  p99 ${String(r.p99).padStart(5)} ms  non2xx ${String(r.non2xx).padStart(5)}  delivered ${r.deliveredPerSecond.toFixed(0)}/s  ${r.cpuMsPerAccepted.toFixed(2)} CPU ms/accepted (relays ${r.relayMsPerAccepted.toFixed(2)}, their main threads ${r.mainMsPerAccepted.toFixed(2)}; pg ${r.pgMsPerAccepted.toFixed(2)}: ${r.pgKinds}); ${r.cpu}; load ${r.load}${r.database ? `\n${r.database}` : ''}`;

const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');

export async function benchPostgres(): Promise<void> {
  const server = process.env.BENCH_DATABASE_URL ? undefined : await startPostgresServer({ durable: true, settings: STATEMENTS ? ['shared_preload_libraries=pg_stat_statements', 'pg_stat_statements.track_planning=on'] : [] });
  const serverUrl = process.env.BENCH_DATABASE_URL ?? server!.url;
  const postmaster = await postmasterPid(serverUrl);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'raven-bench-pg-'));
  try {
    console.log(
      `\npostgres admission: ${CONNECTIONS} connections in all, ${SECONDS}s per target (+${WARM_UP}s warm-up), 1 recipient, limits lifted, fsync on; ` +
        `${os.cpus().length} CPUs, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}\n`,
    );
    const ceiling = !PARTS.has('ceiling') ? undefined : await withDatabase(serverUrl, async (url) => {
      const db = await openPostgres({ url }); // the relay's schema, then the bare server on it
      await db.close();
      const child: ChildProcess = fork(here, ['ceiling', url], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      const { url: target } = await new Promise<{ url: string }>((resolve) => child.once('message', resolve as (m: unknown) => void));
      try {
        const keys = Array.from({ length: WORKSPACES }, (_, i): Sender => ({ key: `k${i}`, domain: 'ceiling.test' }));
        return await load([target], keys, { relays: [child.pid!], postmaster }, url);
      } finally {
        child.send('stop');
        await new Promise((r) => child.once('exit', r));
      }
    });
    if (ceiling) console.log(line(`pg ceiling, ${WORKSPACES} workspaces`, ceiling));
    const runs = new Map<string, Load>();
    if (PARTS.has('admission')) {
      for (const workspaces of (process.env.BENCH_PG_WS ?? `1,${WORKSPACES}`).split(',').map(Number)) {
        for (const n of (process.env.BENCH_PG_RELAYS ?? '1,3').split(',').map(Number)) {
          const r = await withDatabase(serverUrl, async (url) => {
            const relays = await startRelays(url, n, path.join(dir, `a${workspaces}-${n}`), RELAXED);
            try {
              const senders = await workspaceSenders(relays, workspaces);
              return await load(relays.relays.map((x) => x.httpUrl), senders, { relays: relays.relays.map((x) => x.child.pid!), postmaster }, url);
            } finally {
              await Promise.all(relays.relays.map((x) => x.stop()));
            }
          });
          runs.set(`${workspaces}/${n}`, r);
          console.log(line(`raven, ${workspaces} workspace${workspaces === 1 ? '' : 's'}, ${n} relay${n === 1 ? '' : 's'}`, r));
        }
      }
      if (runs.size === 4) {
        const rps = (w: number, n: number) => runs.get(`${w}/${n}`)!.rps;
        const ratio20 = rps(WORKSPACES, 3) / rps(WORKSPACES, 1);
        const ratio1 = rps(1, 3) / rps(1, 1);
        const ofCeiling = ceiling ? rps(WORKSPACES, 1) / ceiling.rps : NaN;
        const spread = rps(WORKSPACES, 1) / rps(1, 1);
        console.log(`\n${WORKSPACES} workspaces, 3 relays / 1 relay:            ${ratio20.toFixed(2)}x   (target >= 1.0x: ${verdict(ratio20 >= 1)})`);
        console.log(`${WORKSPACES} workspaces, 1 relay / pg ceiling:          ${(ofCeiling * 100).toFixed(0)} %   (target >= 70 %: ${verdict(ofCeiling >= 0.7)})`);
        console.log(`1 workspace 3/1 ratio / ${WORKSPACES} workspaces 3/1 ratio:  ${(ratio1 / ratio20).toFixed(2)}    (1 workspace ${ratio1.toFixed(2)}x; target >= 0.95: ${verdict(ratio1 / ratio20 >= 0.95)})`);
        console.log(`1 relay, ${WORKSPACES} workspaces / 1 workspace:          ${spread.toFixed(2)}x   (target >= 0.9x: ${verdict(spread >= 0.9)})`);
        // What the machine's load cannot move: one relay is bound by its main thread (its event
        // loop, one core), three by every core, so each ratio of rates is one of CPU per request.
        const main = (w: number) => runs.get(`${w}/1`)!.mainMsPerAccepted;
        const all = (w: number) => runs.get(`${w}/3`)!.cpuMsPerAccepted;
        console.log(
          `  from CPU per accepted request alone (1 relay bound by its main thread, 3 by the cores): 1 relay's main thread ${main(1).toFixed(2)} ms (1 workspace) / ` +
            `${main(WORKSPACES).toFixed(2)} (${WORKSPACES}) = ${(main(1) / main(WORKSPACES)).toFixed(2)}; 3 relays' relays + pg ${all(WORKSPACES).toFixed(2)} (${WORKSPACES}) / ` +
            `${all(1).toFixed(2)} (1) = ${(all(WORKSPACES) / all(1)).toFixed(2)}; 1-workspace 3/1 ratio / ${WORKSPACES}-workspace 3/1 ratio = their product, ` +
            `${((main(1) / main(WORKSPACES)) * (all(WORKSPACES) / all(1))).toFixed(2)} (holds when the bench has the machine: one relay near a ` +
            `full core, and delivered/s a like share of req/s in the four targets, whose CPU it counts too)`,
        );
      }
    }

    // The specification's limits: one workspace, two live keys (100/s each), 200/s for the workspace.
    if (PARTS.has('spec')) await withDatabase(serverUrl, async (url) => {
      const relays = await startRelays(url, 3, path.join(dir, 'spec'), SPEC);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await relays.admin('POST', `/admin/v1/workspaces/${relays.workspaceId}/activate`);
        const senders = await addProject(relays, relays.workspaceId, 'production', 2);
        const startedAt = new Date().toISOString();
        const r = await load(relays.relays.map((x) => x.httpUrl), senders, { relays: relays.relays.map((x) => x.child.pid!), postmaster }, url);
        const { rows } = await client.query<{ created_at: string }>("SELECT created_at FROM emails WHERE created_at > $1 AND key_id IN (SELECT id FROM api_keys WHERE prefix = 'rr_live_') ORDER BY created_at", [startedAt]);
        const times = rows.map((x) => Date.parse(x.created_at));
        const perSecond = new Map<number, number>();
        for (const t of times) perSecond.set(Math.floor(t / 1000), (perSecond.get(Math.floor(t / 1000)) ?? 0) + 1);
        const sliding = fullestWindow(times, 1000);
        const calendar = Math.max(...perSecond.values());
        console.log(`\n${line('spec limits, 2 live keys, 3 relays', r)}`);
        console.log(
          `  accepted ${r.accepted.toFixed(1)}/s sustained (target >= 190: ${verdict(r.accepted >= 190)}); fullest second ${calendar} by the clock, ` +
            `${sliding} in any 1,000 ms (never > 200: ${verdict(sliding <= 200)}); answers ${JSON.stringify(r.statuses)}`,
        );
      } finally {
        await client.end();
        await Promise.all(relays.relays.map((x) => x.stop()));
      }
    });

    if (PARTS.has('e2e')) await withDatabase(serverUrl, async (url) => {
      const { relays, sender } = await startRelays(url, 3, path.join(dir, 'e2e'), RELAXED);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const started = Date.now();
        let next = 0;
        const lane = async () => {
          while (next < E2E_N) {
            const i = next++;
            const res = await fetch(`${relays[i % 3]!.httpUrl}/v1/emails`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', authorization: `Bearer ${sender.key}` },
              body: message(sender.domain, i),
            });
            if (res.status !== 202) throw new Error(`send ${i}: ${res.status} ${await res.text()}`);
            await res.arrayBuffer();
          }
        };
        await Promise.all(Array.from({ length: 24 }, lane));
        const sentMs = Date.now() - started;
        for (;;) {
          const { rows } = await client.query("SELECT COUNT(*)::int AS n FROM recipients WHERE status <> 'delivered'");
          if (rows[0].n === 0) break;
          await new Promise((r) => setTimeout(r, 50));
        }
        const allMs = Date.now() - started;
        const { rows } = await client.query(
          `SELECT EXTRACT(EPOCH FROM (MAX(v.occurred_at)::timestamptz - e.created_at::timestamptz)) * 1000 AS ms
             FROM emails e JOIN events v ON v.email_id = e.id AND v.type = 'email.delivered' GROUP BY e.id, e.created_at ORDER BY ms`,
        );
        const ms = rows.map((r: { ms: number }) => Number(r.ms));
        const at = (p: number) => ms[Math.min(ms.length - 1, Math.floor((p / 100) * ms.length))]!.toFixed(0);
        console.log(
          `\npostgres end to end, 3 relays: ${E2E_N} emails x 1 recipient, 24 senders round-robin; sent in ${sentMs} ms, ` +
            `all delivered after ${allMs} ms (${((E2E_N * 1000) / allMs).toFixed(0)} emails/s); accepted -> delivered p50 ${at(50)} ms, p99 ${at(99)} ms; ` +
            `load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`,
        );
      } finally {
        await client.end();
        await Promise.all(relays.map((x) => x.stop()));
      }
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
    await server?.stop();
  }
}

if (process.argv[1] === here) {
  if (process.argv[2] === 'ceiling') await serveCeiling(process.argv[3]!);
  else await benchPostgres();
}
