// PostgreSQL figures for `npm run bench` (section `postgres`), or alone:
// `node --import tsx bench/postgres.ts`. Prints, never asserts.
//
// - admission with one, two and three relay processes on one database, against the same
//   machine's PostgreSQL ceiling: a minimal Node server inserting the same rows per request (the
//   email, its recipients, its job, its event, its idempotency key, the usage counters) in one
//   transaction, through a pool of the same size;
// - end to end with three relays: emails sent round-robin, until every recipient is delivered.
// The server is a fresh one with fsync on (commits durable, as in production), in a temporary
// directory, unless BENCH_DATABASE_URL names one (a role that may create databases).
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { openPostgres } from '../relay/storage/postgres/db.js';
import { createTestDatabase, startPostgresServer } from '../test/helpers/postgres-server.js';
import { startRelayProcess, type RelayProcess } from '../test/helpers/relay-process.js';

const here = fileURLToPath(import.meta.url);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const E2E_N = Number(process.env.BENCH_E2E_N ?? 500);
const POOL = 10; // the relay's pool size (relay/storage/postgres/db.ts)
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const DOMAIN = 'example.test';

function message(i = 0) {
  return JSON.stringify({
    from: `Bench <sender@${DOMAIN}>`,
    to: [1, 2, 3].map((n) => `user${n}@${DOMAIN}`),
    subject: `Your receipt #${i}`,
    text: 'Thanks for your order. '.repeat(38),
    tags: { category: 'receipt' },
  });
}

// ---------- the ceiling: a minimal server inserting the same rows ----------
async function serveCeiling(url: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: url, max: POOL });
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { from: string; to: string[]; subject: string; text: string; tags: object };
      const now = new Date().toISOString();
      const id = `em_${randomUUID().replace(/-/g, '').slice(0, 26)}`;
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const { rows } = await client.query(
          `INSERT INTO emails (id, project_id, workspace_id, key_id, status, from_address, to_json, cc_json, bcc_json, subject, text_body,
             tags_json, test_mode, created_at, updated_at) VALUES ($1, 'p', 'w', 'k', 'queued', $2, $3, '[]', '[]', $4, $5, $6, 1, $7, $7) RETURNING seq`,
          [id, body.from, JSON.stringify(body.to), body.subject, body.text, JSON.stringify(body.tags), now],
        );
        await client.query(
          `INSERT INTO recipients (email_id, email_seq, position, address, address_lc, type, status, updated_at)
           SELECT $1, $2, n - 1, a, lower(a), 'to', 'queued', $3 FROM unnest($4::text[]) WITH ORDINALITY AS t(a, n)`,
          [id, rows[0].seq, now, body.to],
        );
        await client.query("INSERT INTO jobs (email_id, state, run_at, attempts, created_at, updated_at) VALUES ($1, 'ready', $2, 0, $2, $2)", [id, now]);
        await client.query("INSERT INTO events (id, email_id, project_id, type, payload_json, occurred_at) VALUES ($1, $2, 'p', 'email.queued', '{}', $3)", [
          `evt_${id.slice(3)}`,
          id,
          now,
        ]);
        await client.query(
          "INSERT INTO idempotency_keys (project_id, key, body_hash, email_id, status_code, response_json, created_at, expires_at) VALUES ('p', $1, 'h', $2, 202, '{}', $3, $3)",
          [String(req.headers['idempotency-key'] ?? id), id, now],
        );
        await client.query(
          "INSERT INTO usage_counters (scope, month, used) VALUES ('ws:w', '2026-11', 3), ('key:k', '2026-11', 3) ON CONFLICT (scope, month) DO UPDATE SET used = usage_counters.used + excluded.used",
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

// ---------- load ----------
interface Load {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
}

let idempotencyCounter = 0;

/** CONNECTIONS spread over the URLs, for SECONDS (after a 1 s warm-up); the URLs' sum. */
async function load(urls: string[], apiKey: string): Promise<Load> {
  const run = (url: string, duration: number) =>
    autocannon({
      url,
      connections: Math.max(1, Math.round(CONNECTIONS / urls.length)),
      duration,
      requests: [
        {
          method: 'POST',
          path: '/v1/emails',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
          body: message(),
          setupRequest: (req: any) => ({ ...req, headers: { ...req.headers, 'idempotency-key': `bench-pg-${idempotencyCounter++}` } }),
        },
      ],
    });
  await Promise.all(urls.map((u) => run(u, 1)));
  const results = await Promise.all(urls.map((u) => run(u, SECONDS)));
  return {
    rps: results.reduce((n, r) => n + r.requests.average, 0),
    p50: Math.max(...results.map((r) => r.latency.p50)),
    p99: Math.max(...results.map((r) => r.latency.p99)),
    non2xx: results.reduce((n, r) => n + r.non2xx, 0),
  };
}

const RELAXED = {
  testKeyPerMinute: 100_000_000,
  keyPerSecond: 100_000_000,
  workspacePerSecond: 100_000_000,
  testKeyMonthlyRecipients: 1_000_000_000,
  workspaceMonthlyRecipients: 1_000_000_000,
};

async function startRelays(databaseUrl: string, n: number, dir: string): Promise<{ relays: RelayProcess[]; apiKey: string }> {
  const config = path.join(dir, 'relay.json');
  await writeFile(config, JSON.stringify({ limits: RELAXED }));
  const start = (i: number) =>
    startRelayProcess({ dataDir: path.join(dir, `relay-${i}`), adminToken: ADMIN_TOKEN, config, extraArgs: ['--database', databaseUrl], startTimeoutMs: 60_000 });
  const first = await start(0);
  const rest = await Promise.all(Array.from({ length: n - 1 }, (_, i) => start(i + 1)));
  return { relays: [first, ...rest], apiKey: first.ready.bootstrap.api_key };
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
  `${name.padEnd(40)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${String(r.p50).padStart(4)} ms  p99 ${String(r.p99).padStart(4)} ms  non2xx ${r.non2xx}`;

export async function benchPostgres(): Promise<void> {
  const server = process.env.BENCH_DATABASE_URL ? undefined : await startPostgresServer({ durable: true });
  const serverUrl = process.env.BENCH_DATABASE_URL ?? server!.url;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'raven-bench-pg-'));
  try {
    console.log(`\npostgres admission: ${CONNECTIONS} connections in all, ${SECONDS}s per target (+1s warm-up), 3 recipients, fsync on\n`);
    const ceiling = await withDatabase(serverUrl, async (url) => {
      const db = await openPostgres({ url }); // the relay's schema, then the bare server on it
      await db.close();
      const child: ChildProcess = fork(here, ['ceiling', url], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      const { url: target } = await new Promise<{ url: string }>((resolve) => child.once('message', resolve as (m: unknown) => void));
      try {
        return await load([target], 'none');
      } finally {
        child.send('stop');
        await new Promise((r) => child.once('exit', r));
      }
    });
    console.log(line('pg ceiling (same rows, one transaction)', ceiling));
    const ratios: string[] = [];
    for (const n of [1, 2, 3]) {
      const r = await withDatabase(serverUrl, async (url) => {
        const { relays, apiKey } = await startRelays(url, n, path.join(dir, `a${n}`));
        try {
          return await load(relays.map((x) => x.httpUrl), apiKey);
        } finally {
          await Promise.all(relays.map((x) => x.stop()));
        }
      });
      console.log(line(`raven, ${n} relay${n === 1 ? '' : 's'}`, r));
      ratios.push(`${n}: ${((r.rps / ceiling.rps) * 100).toFixed(1)}%`);
    }
    console.log(`\nrelays / pg ceiling:      ${ratios.join(', ')}`);

    await withDatabase(serverUrl, async (url) => {
      const { relays, apiKey } = await startRelays(url, 3, path.join(dir, 'e2e'));
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
              headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
              body: message(i),
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
             FROM emails e JOIN events v ON v.email_id = e.id AND v.type = 'email.delivered' GROUP BY e.id ORDER BY ms`,
        );
        const ms = rows.map((r: { ms: number }) => Number(r.ms));
        const at = (p: number) => ms[Math.min(ms.length - 1, Math.floor((p / 100) * ms.length))]!.toFixed(0);
        console.log(
          `\npostgres end to end, 3 relays: ${E2E_N} emails x 3 recipients, 24 senders round-robin; sent in ${sentMs} ms, ` +
            `all delivered after ${allMs} ms (${((E2E_N * 1000) / allMs).toFixed(0)} emails/s); accepted -> delivered p50 ${at(50)} ms, p99 ${at(99)} ms`,
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
