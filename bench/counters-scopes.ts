// The admission counters' cost per batch as the workspaces a batch touches grow (issue 24,
// PostgreSQL): takeCounters as admission calls it (the read, a decision of one hit and one
// recipient per admission, the charge first, the confirm in the batch's transaction), 24
// admissions a batch spread round-robin over 1 or 20 workspaces (three rate windows and two usage
// counters each, limits lifted), one batch every 33 ms, rounds of each interleaved after a round
// that fills the windows. Prints the CPU ms per batch of this process and of PostgreSQL's
// processes (CPU time, which a loaded machine inflates far less than rates), and the WAL written a
// batch (the server's whole WAL: nothing else writes to it meanwhile). Not the relay: no
// HTTP, no limiter, no other reads or rows, no delivery.
// `node --import tsx bench/counters-scopes.ts`; BENCH_COUNTERS_BATCHES (a round, 600),
// BENCH_COUNTERS_ROUNDS (2), BENCH_COUNTERS_WS (1,20), BENCH_COUNTERS_ONLY=rate|usage (one kind of
// counter), BENCH_COUNTERS_HOLD=<ms> (another connection keeps a transaction open that long, again
// and again, as a relay's batches and deliveries do, so old row versions wait to be pruned).
import os from 'node:os';
import { takeCounters, type CounterRow, type RateWindowRef } from '../relay/storage/counters.js';
import { openPostgres } from '../relay/storage/postgres/db.js';
import { createTestDatabase, startPostgresServer } from '../test/helpers/postgres-server.js';
import { serverTreeCpuSeconds } from './process-cpu.js';
import { postmasterPid } from './postgres.js';
import pg from 'pg';

const BATCHES = Number(process.env.BENCH_COUNTERS_BATCHES ?? 600);
const ROUNDS = Number(process.env.BENCH_COUNTERS_ROUNDS ?? 2);
const SCOPES = (process.env.BENCH_COUNTERS_WS ?? '1,20').split(',').map(Number);
const PER_BATCH = 24;
const CAP = 100_000_000; // limits lifted

function scopesOf(workspaces: number) {
  const windows: RateWindowRef[] = [];
  const usage: string[] = [];
  for (let i = 0; i < workspaces; i++) {
    windows.push({ scope: `key:k${i}`, windowMs: 1_000, limit: CAP }, { scope: `ws:w${i}`, windowMs: 1_000, limit: CAP }, { scope: `test:k${i}`, windowMs: 60_000, limit: CAP });
    usage.push(`ws:w${i}`, `key:k${i}`);
  }
  return { windows, usage };
}

const server = await startPostgresServer({ durable: true });
const postmaster = (await postmasterPid(server.url))!;
// Every backend's, those ended meanwhile too (the pool closes connections idle for 30 s).
const pgCpu = () => serverTreeCpuSeconds(postmaster);
const walClient = new pg.Client({ connectionString: server.url });
await walClient.connect();
const walLsn = async () => (await walClient.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]!.lsn;
const walBytes = async (since: string) => Number((await walClient.query<{ n: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1) AS n', [since])).rows[0]!.n);
try {
  const dbs = new Map<number, { db: Awaited<ReturnType<typeof openPostgres>>; drop: () => Promise<void>; url: string }>();
  for (const ws of SCOPES) {
    const t = await createTestDatabase(server.url);
    dbs.set(ws, { db: await openPostgres({ url: t.url }), drop: t.drop, url: t.url });
  }
  // BENCH_COUNTERS_HOLD: a transaction with an id kept open on each database, again and again.
  const hold = Number(process.env.BENCH_COUNTERS_HOLD ?? 0);
  let holding = true;
  const holders = hold > 0 ? [...dbs.keys()].map(async (ws) => {
    const c = new pg.Client({ connectionString: dbs.get(ws)!.url });
    await c.connect();
    while (holding) {
      await c.query('BEGIN');
      await c.query('SELECT txid_current()');
      await new Promise((r) => setTimeout(r, hold));
      await c.query('COMMIT');
    }
    await c.end();
  }) : [];
  const run = async (ws: number) => {
    const { db } = dbs.get(ws)!;
    const all = scopesOf(ws);
    const only = process.env.BENCH_COUNTERS_ONLY;
    const windows = only === 'usage' ? [] : all.windows;
    const usage = only === 'rate' ? [] : all.usage;
    const walBefore = await walLsn();
    const pgBefore = pgCpu();
    const before = process.cpuUsage();
    const started = performance.now();
    for (let b = 0; b < BATCHES; b++) {
      const due = started + b * 33;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      await db.write(async (tx) => {
        const taken = await takeCounters(
          db,
          tx,
          { windows, usageScopes: usage, nowMs: () => Date.now(), maxHits: PER_BATCH },
          async (read) => [undefined, await tx.all<CounterRow>(read.sql, read.params)] as const,
          () => {
            const hits = new Map<string, number>();
            const used = new Map<string, number>();
            for (let i = 0; i < PER_BATCH; i++) {
              const w = i % ws;
              for (const s of [`key:k${w}`, `ws:w${w}`, `test:k${w}`]) hits.set(s, (hits.get(s) ?? 0) + 1);
              for (const s of [`ws:w${w}`, `key:k${w}`]) used.set(s, (used.get(s) ?? 0) + 1);
            }
            return {
              value: undefined,
              rate: windows.map((w) => ({ ...w, hits: hits.get(w.scope) ?? 0 })),
              usage: usage.map((scope) => ({ scope, cap: CAP, recipients: used.get(scope) ?? 0 })),
            };
          },
        );
        await taken.confirm(tx);
      });
    }
    const self = process.cpuUsage(before);
    return { js: (self.user + self.system) / 1000 / BATCHES, pg: ((pgCpu() - pgBefore) * 1000) / BATCHES, ms: (performance.now() - started) / BATCHES, walKb: (await walBytes(walBefore)) / 1024 / BATCHES };
  };
  // Fill the windows first (two windows' worth of the longest).
  for (const ws of SCOPES) await run(ws);
  console.log(`filled; postmaster ${postmaster}`);
  console.log(`counters per batch (${PER_BATCH} admissions, ${BATCHES} batches a round), load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  for (let r = 0; r < ROUNDS; r++) {
    for (const ws of SCOPES) {
      const x = await run(ws);
      console.log(`  ${String(ws).padStart(2)} workspaces: this process ${x.js.toFixed(2)} CPU ms, PostgreSQL ${x.pg.toFixed(2)} CPU ms, WAL ${x.walKb.toFixed(1)} KB a batch (${x.ms.toFixed(1)} ms each); load ${os.loadavg()[0]!.toFixed(1)}`);
    }
  }
  holding = false;
  await Promise.all(holders);
  for (const { db, drop } of dbs.values()) {
    await db.close();
    await drop();
  }
} finally {
  await walClient.end();
  await server.stop();
}
