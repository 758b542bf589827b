// A load target run in its own process so autocannon (in the parent) does not share its event loop.
// Usage (forked by bench/run.ts): node --import tsx bench/target.ts <node|sqlite|smtp|relay> <dataDir>
// Sends {url, apiKey, domain, projectId, adminToken, runtimeThreads} over IPC when ready, then answers each request:
// {cmd: 'memory'} -> {rss, peakRss}; {cmd: 'indexed'} (relay) -> once every captured message has its
// inbox entry; {cmd: 'stop'} -> {rss, peakRss}, then exits.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sqlite3 from 'sqlite3';
import type { Bootstrap } from '../relay/domain/first-run.js';

const kind = process.argv[2];
const dataDir = process.argv[3];
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
// Where the kernel keeps no high-water mark (not Linux), the peak is sampled.
let sampledPeak = process.memoryUsage().rss;
const sampler = setInterval(() => {
  sampledPeak = Math.max(sampledPeak, process.memoryUsage.rss());
}, 50);

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function listen(server: http.Server): Promise<string> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as any).port}`)));
}

let counter = 0;
// The relay's id length (a prefix and 26 characters), so index entries are as wide.
const newId = () => `em_${Date.now().toString(36).padStart(10, '0')}${(counter++).toString(36).padStart(16, '0')}`;

async function startNode() {
  const server = http.createServer(async (req, res) => {
    try {
      JSON.parse((await readBody(req)).toString('utf8'));
      res.writeHead(202, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: newId(), status: 'queued', test_mode: true }));
    } catch {
      res.writeHead(400).end();
    }
  });
  return { url: await listen(server), stop: async () => server.close() };
}

// The ceiling a SQLite-backed admission can reach with node-sqlite3: the relay's own schema
// (its migrations, so the same indexes and foreign keys) and PRAGMAs, and per request the rows an
// admission commits: the email, its recipients (with email_seq, as the relay writes them), the
// email.queued event, the job, the idempotency row, and the monthly usage counters. None of the
// relay's checks or reads. Requests that arrive while a transaction commits form the next batch:
// BEGIN IMMEDIATE, one multi-row INSERT per table (the emails first, for the foreign keys, then
// the rest at once), COMMIT.
async function startSqlite() {
  const db = new sqlite3.Database(path.join(dataDir, 'ceiling.sqlite'));
  const exec = (sql: string) => new Promise<void>((ok, ko) => db.exec(sql, (e) => (e ? ko(e) : ok())));
  await exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;');
  const migrations = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'relay', 'storage', 'migrations');
  for (const file of (await readdir(migrations)).filter((f) => f.endsWith('.sql')).sort()) {
    await exec(await readFile(path.join(migrations, file), 'utf8'));
  }
  const now0 = new Date().toISOString();
  // Columns named, so a migration that adds one does not break the ceiling.
  await exec(`INSERT INTO workspaces (id, name, created_at) VALUES ('ws_bench', 'bench', '${now0}');
    INSERT INTO projects (id, workspace_id, name, environment, created_at) VALUES ('prj_bench', 'ws_bench', 'bench', 'development', '${now0}');
    INSERT INTO api_keys (id, project_id, name, prefix, permission, secret_hash, last4, created_at)
      VALUES ('key_bench', 'prj_bench', 'bench', 'rr_test_', 'email:send', 'x', 'xxxx', '${now0}');`);

  // One prepared statement per (table, row count), kept for the next batch of that size. `row` is
  // the placeholders of one row when they are not simply one per column.
  const statements = new Map<string, sqlite3.Statement>();
  const insertRows = (table: string, columns: string, rows: unknown[][], suffix = '', row?: string): Promise<void> => {
    const values = rows.map((r) => row ?? `(${r.map(() => '?').join(',')})`).join(',');
    const sql = `INSERT INTO ${table} (${columns}) VALUES ${values} ${suffix}`;
    let stmt = statements.get(sql);
    if (!stmt) statements.set(sql, (stmt = db.prepare(sql)));
    return new Promise((ok, ko) => stmt.run(rows.flat(), (e: Error | null) => (e ? ko(e) : ok())));
  };

  interface Admission { id: string; msg: any; idempotencyKey: string; bodyHash: string; done: (e?: unknown) => void }
  let pending: Admission[] = [];
  let committing = false;
  const commit = async (batch: Admission[]) => {
    const now = new Date().toISOString();
    const month = now.slice(0, 7);
    const expires = new Date(Date.now() + 7 * 86_400_000).toISOString();
    await exec('BEGIN IMMEDIATE');
    try {
      await insertRows(
        'emails',
        'id, project_id, workspace_id, key_id, status, from_address, to_json, cc_json, bcc_json, reply_to, subject, ' +
          'text_body, html_body, headers_json, tags_json, metadata_json, test_mode, suppression_reason, created_at, updated_at, terminal_at',
        batch.map(({ id, msg }) => [
          id, 'prj_bench', 'ws_bench', 'key_bench', 'queued', msg.from, JSON.stringify(msg.to), '[]', '[]', null, msg.subject,
          msg.text, null, '{}', JSON.stringify(msg.tags ?? {}), '{}', 1, null, now, now, null,
        ]),
      );
      const recipients = batch.flatMap(({ id, msg }) =>
        (msg.to as string[]).map((to, i) => [id, id, i, to, to.toLowerCase(), 'to', 'queued', now]),
      );
      const charged = recipients.length;
      await Promise.all([
        insertRows(
          'recipients',
          'email_id, email_seq, position, address, address_lc, type, status, updated_at',
          recipients,
          '',
          '(?, (SELECT seq FROM emails WHERE id = ?), ?, ?, ?, ?, ?, ?)',
        ),
        insertRows(
          'events',
          'id, email_id, project_id, type, payload_json, occurred_at',
          batch.map(({ id }) => [`evt_${id}`, id, 'prj_bench', 'email.queued', '{}', now]),
        ),
        insertRows('jobs', 'email_id, state, run_at, attempts, created_at, updated_at', batch.map(({ id }) => [id, 'ready', now, 0, now, now])),
        insertRows(
          'idempotency_keys',
          'project_id, key, body_hash, email_id, status_code, response_json, created_at, expires_at',
          batch.map((a) => ['prj_bench', a.idempotencyKey, a.bodyHash, a.id, 202, JSON.stringify(reply(a.id)), now, expires]),
        ),
        insertRows(
          'usage_counters',
          'scope, month, used',
          [['ws:ws_bench', month, charged], ['key:key_bench', month, charged]],
          'ON CONFLICT (scope, month) DO UPDATE SET used = used + excluded.used',
        ),
      ]);
      await exec('COMMIT');
    } catch (error) {
      await exec('ROLLBACK').catch(() => undefined);
      throw error;
    }
  };
  const flush = async () => {
    if (committing || pending.length === 0) return;
    committing = true;
    const batch = pending;
    pending = [];
    const error = await commit(batch).then(() => undefined, (e: unknown) => e ?? new Error('commit failed'));
    for (const a of batch) a.done(error);
    committing = false;
    void flush();
  };
  const reply = (id: string) => ({ id, status: 'queued', test_mode: true });
  const server = http.createServer(async (req, res) => {
    try {
      const raw = await readBody(req);
      const msg = JSON.parse(raw.toString('utf8'));
      const id = newId();
      const idempotencyKey = String(req.headers['idempotency-key'] ?? id);
      const bodyHash = createHash('sha256').update(raw).digest('hex');
      await new Promise<void>((ok, ko) => {
        pending.push({ id, msg, idempotencyKey, bodyHash, done: (e) => (e ? ko(e) : ok()) });
        void flush();
      });
      res.writeHead(202, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply(id)));
    } catch {
      res.writeHead(500).end();
    }
  });
  return {
    url: await listen(server),
    stop: async () => {
      server.close();
      await new Promise((r) => db.close(r));
    },
  };
}

// The ceiling of SMTP intake for the sink comparison: a bare smtp-server in a process of its own,
// as the relay and MailDev are, that reads every message to its end, drops it and answers 250.
async function startSmtp() {
  const { SMTPServer } = await import('smtp-server');
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    disableReverseLookup: true,
    logger: false,
    onData(stream, _session, callback) {
      stream.on('data', () => {});
      stream.on('end', () => callback());
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: '',
    smtpPort: (server.server.address() as { port: number }).port,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function startRelayTarget() {
  const { startRelay } = await import('../relay/app.js');
  // The threads before the relay starts: the runtime's (V8's compiler and GC helpers, libuv's pool,
  // started here by a read through it, where SQLite's statements run). Every thread added later is
  // one of the relay's worker threads (relay/threads/), so bench/run.ts can tell the three apart.
  await readFile(fileURLToPath(import.meta.url));
  const runtimeThreads = existsSync('/proc/self/task') ? readdirSync('/proc/self/task') : [];
  const relay = await startRelay({
    flags: { dataDir, port: 0, smtpPort: 0, adminToken: ADMIN_TOKEN, logLevel: 'error' },
    env: {},
    overrides: (config) => {
      for (const k of ['testKeyPerMinute', 'keyPerSecond', 'workspacePerSecond', 'testKeyMonthlyRecipients', 'workspaceMonthlyRecipients'] as const) {
        config.limits[k] = 1e9;
      }
      if (process.env.BENCH_DELIVERY_CONCURRENCY) config.delivery.concurrency = Number(process.env.BENCH_DELIVERY_CONCURRENCY);
    },
  });
  const bootstrap = relay.bootstrap!;
  return {
    runtimeThreads,
    url: relay.httpUrl,
    apiKey: bootstrap.apiKey,
    domain: bootstrap.domain,
    projectId: bootstrap.projectId,
    smtpPort: relay.smtpPort,
    submissionPort: relay.submission.port,
    bootstrap,
    stop: () => relay.stop(),
    /** Resolves once every captured message has its inbox entry (the indexer's deferred work is done). */
    indexed: async () => {
      const count = async (table: string) => Number((await relay.services.db.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))?.n ?? 0);
      while ((await count('inbox_entries')) < (await count('captured_messages'))) await new Promise((r) => setTimeout(r, 20));
    },
  };
}

/** Resident memory now and at its peak, in bytes: the kernel's figures where there are some. */
async function memory(): Promise<{ rss: number; peakRss: number }> {
  const rss = process.memoryUsage().rss;
  try {
    const status = await readFile('/proc/self/status', 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    return { rss: kb('VmRSS') || rss, peakRss: kb('VmHWM') || Math.max(rss, sampledPeak) };
  } catch {
    return { rss, peakRss: Math.max(rss, sampledPeak) };
  }
}

type Target = {
  url: string;
  apiKey?: string;
  domain?: string;
  projectId?: string;
  smtpPort?: number;
  submissionPort?: number;
  bootstrap?: Bootstrap;
  stop(): Promise<unknown>;
  indexed?: () => Promise<void>;
  /** The relay process's threads before the relay started (main included), by id; empty off Linux. */
  runtimeThreads?: string[];
};
const target: Target =
  kind === 'node' ? await startNode() : kind === 'sqlite' ? await startSqlite() : kind === 'smtp' ? await startSmtp() : await startRelayTarget();
process.send!({
  url: target.url,
  apiKey: target.apiKey ?? 'x',
  domain: target.domain ?? 'example.test',
  projectId: target.projectId,
  smtpPort: target.smtpPort,
  submissionPort: target.submissionPort,
  bootstrap: target.bootstrap,
  adminToken: ADMIN_TOKEN,
  runtimeThreads: target.runtimeThreads,
});
process.on('disconnect', () => process.exit(1));
// Requests from bench/run.ts; each gets one reply.
process.on('message', async (m: { cmd: 'memory' | 'stop' | 'indexed' }) => {
  if (m.cmd === 'memory') {
    process.send!(await memory());
  } else if (m.cmd === 'indexed') {
    await target.indexed?.();
    process.send!({ indexed: true });
  } else if (m.cmd === 'stop') {
    clearInterval(sampler);
    const mem = await memory();
    await Promise.race([target.stop(), new Promise((r) => setTimeout(r, 5000))]);
    process.send!(mem, () => process.exit(0));
  }
});
