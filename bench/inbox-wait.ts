// The wait's figure (issue 23), a section of `npm run bench` (BENCH_ONLY=wait): from the sink's 250
// (the capture committed) to the waiting client's answer, with BENCH_WAITERS (100) waits open the
// whole time, p50/p99 over BENCH_WAIT_SAMPLES (200) messages. The relay runs in this process, on
// SQLite (BENCH_WAIT_DATABASE=postgres://... for PostgreSQL).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { startRelay } from '../relay/app.js';

const WAITERS = Number(process.env.BENCH_WAITERS ?? 100);
const SAMPLES = Number(process.env.BENCH_WAIT_SAMPLES ?? 200);

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

export async function waitBench(): Promise<void> {
  console.log(`== wait: capture -> waiting client, ${WAITERS} waits open, ${SAMPLES} messages ==`);
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'raven-bench-wait-'));
  const relay = await startRelay({
    flags: { dataDir, port: 0, smtpPort: 0, adminToken: 'bench-admin-token-0123456789', logLevel: 'error', ...(process.env.BENCH_WAIT_DATABASE ? { database: process.env.BENCH_WAIT_DATABASE } : {}) },
    env: {},
  });
  const transport = nodemailer.createTransport({ host: relay.smtpHost, port: relay.smtpPort, ignoreTLS: true, pool: true, maxConnections: 1 });
  const open = (i: number) =>
    fetch(`${relay.httpUrl}/admin/v1/messages/wait?to=waiter-${i}@bench.test&timeout=120`, { headers: { authorization: `Bearer ${relay.adminToken}` } }).then(
      async (res) => ({ status: res.status, at: performance.now(), body: await res.text() }),
    );
  try {
    const waits = new Map<number, ReturnType<typeof open>>();
    for (let i = 0; i < WAITERS; i++) waits.set(i, open(i));
    while (relay.services.messageWaits.size < WAITERS) await new Promise((r) => setTimeout(r, 10));
    const latencies: number[] = [];
    for (let n = 0; n < SAMPLES; n++) {
      const i = n; // the oldest open wait; a new one replaces it, so WAITERS stay open
      waits.set(WAITERS + n, open(WAITERS + n));
      await transport.sendMail({ from: 'app@bench.test', to: `waiter-${i}@bench.test`, subject: `Sample ${n}`, text: 'Your code is 482913.' });
      const captured = performance.now();
      const answer = await waits.get(i)!;
      waits.delete(i);
      if (answer.status !== 200) throw new Error(`wait answered ${answer.status}: ${answer.body}`);
      latencies.push(answer.at - captured);
    }
    const sorted = latencies.sort((a, b) => a - b);
    console.log(`  capture -> client  p50 ${pct(sorted, 50).toFixed(1)} ms  p99 ${pct(sorted, 99).toFixed(1)} ms  max ${sorted[sorted.length - 1]!.toFixed(1)} ms  (target p99 < 100 ms)`);
  } finally {
    transport.close();
    await relay.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}
