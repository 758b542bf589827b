// The relay's CPU per delivered email, variant against variant, in interleaved rounds: a figure
// that survives a loaded machine (BENCHMARKS.md, issue 24, session 9). Not part of `npm run bench`.
//
//   node --import tsx bench/delivery-cpu.ts <rounds> <emails per round> <name>=<checkout>[,VAR=value...] ...
//
// Each variant is a relay (`bench/target.ts relay`, limits lifted, delivery into its own sink)
// started from its own checkout (a second checkout of the commit to compare with, its
// node_modules linked), with extra environment variables (`ARGV=...` adds node flags). Each is
// left to settle, warmed up with 200 emails, then every round sends `emails` 1-recipient emails
// from 20 concurrent senders to each variant in turn (the order alternating) and waits until its
// queue is empty. Printed per round: CPU milliseconds per email over all the relay's threads, its
// main thread's, and each other thread's (by its id's offset from the process id: the pool's
// threads start last), from /proc (Linux only).
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { EmailPoster } from './email-poster.js';

interface Variant {
  name: string;
  dir: string;
  env: Record<string, string>;
  argv: string[];
  child?: ChildProcess;
  target?: { url: string; apiKey: string; domain: string };
  data?: string;
  totals: number[];
}

const [roundsArg, emailsArg, ...specs] = process.argv.slice(2);
const rounds = Number(roundsArg);
const emails = Number(emailsArg);
if (!(rounds > 0 && emails > 0 && specs.length > 0)) throw new Error('usage: delivery-cpu.ts <rounds> <emails> <name>=<checkout>[,VAR=value...] ...');

/** CPU ticks (1/100 s) used so far by each thread of the process. */
async function threadTicks(pid: number): Promise<Map<number, number>> {
  const ticks = new Map<number, number>();
  for (const tid of await readdir(`/proc/${pid}/task`).catch(() => [])) {
    const stat = await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8').catch(() => '');
    if (!stat) continue;
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks.set(Number(tid), Number(fields[11]) + Number(fields[12]));
  }
  return ticks;
}
const sum = (m: Map<number, number>) => [...m.values()].reduce((a, b) => a + b, 0);

function parse(spec: string): Variant {
  const name = spec.slice(0, spec.indexOf('='));
  const [dir, ...vars] = spec.slice(spec.indexOf('=') + 1).split(',');
  const env = Object.fromEntries(vars.map((v) => [v.slice(0, v.indexOf('=')), v.slice(v.indexOf('=') + 1)]));
  const argv = env.ARGV ? env.ARGV.split(' ') : [];
  delete env.ARGV;
  return { name, dir: dir!, env, argv, totals: [] };
}

// Posted as bench/run.ts's end-to-end loads post (bench/email-poster.ts): fetch's own CPU was taken from the relays measured.
const poster = new EmailPoster();

async function send(v: Variant, count: number): Promise<void> {
  const t = v.target!;
  let next = 0;
  await Promise.all(
    Array.from({ length: 20 }, async () => {
      while (next < count) {
        const i = next++;
        const body = { from: `Bench <sender@${t.domain}>`, to: [`user1@${t.domain}`], subject: `Your receipt #${i}`, text: 'Thanks for your order. '.repeat(38) };
        const { status } = await poster.post(t.url, t.apiKey, JSON.stringify(body));
        if (status !== 202) throw new Error(`${v.name} answered ${status}`);
      }
    }),
  );
}

async function drained(v: Variant): Promise<void> {
  for (;;) {
    const text = await (await fetch(`${v.target!.url}/metrics`)).text();
    let depth = 0;
    for (const m of text.matchAll(/^raven_queue_jobs\{state="(ready|running)"\} (\d+)$/gm)) depth += Number(m[2]);
    if (depth === 0) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Until the relay uses under 5 % of a core over a second (a minute at most). */
async function settled(v: Variant): Promise<void> {
  for (let i = 0; i < 60; i++) {
    const before = sum(await threadTicks(v.child!.pid!));
    await new Promise((r) => setTimeout(r, 1_000));
    if (sum(await threadTicks(v.child!.pid!)) - before < 5) return;
  }
}

const variants = specs.map(parse);
try {
  for (const v of variants) {
    v.data = await mkdtemp(path.join(os.tmpdir(), 'raven-bench-cpu-'));
    v.child = fork(path.join(v.dir, 'bench', 'target.ts'), ['relay', v.data], {
      cwd: v.dir,
      execArgv: [...v.argv, '--import', 'tsx'],
      env: { ...process.env, ...v.env },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    v.target = await new Promise((resolve) => v.child!.once('message', resolve));
  }
  for (const v of variants) {
    await settled(v);
    await send(v, 200);
    await drained(v);
    await settled(v);
  }
  for (let round = 1; round <= rounds; round++) {
    for (const v of round % 2 ? variants : [...variants].reverse()) {
      const pid = v.child!.pid!;
      const before = await threadTicks(pid);
      const start = performance.now();
      await send(v, emails);
      await drained(v);
      const seconds = (performance.now() - start) / 1000;
      const used = new Map([...(await threadTicks(pid))].map(([tid, t]) => [tid, t - (before.get(tid) ?? 0)]));
      const perEmail = (ticks: number) => ((ticks * 10) / emails).toFixed(2);
      const threads = [...used].filter(([, t]) => t > 0).sort((a, b) => b[1] - a[1]).map(([tid, t]) => `+${tid - pid}:${perEmail(t)}`);
      v.totals.push((sum(used) * 10) / emails);
      console.log(
        `round ${round} ${v.name.padEnd(8)} CPU per email ${perEmail(sum(used))} ms, main thread ${perEmail(used.get(pid) ?? 0)} ms; ` +
          `${(emails / seconds).toFixed(0)} delivered/s; load ${os.loadavg()[0]!.toFixed(1)}; per thread (id - pid: ms) ${threads.join(' ')}`,
      );
    }
  }
  for (const v of variants) {
    const sorted = [...v.totals].sort((a, b) => a - b);
    console.log(`${v.name.padEnd(8)} median CPU per email ${sorted[Math.floor(sorted.length / 2)]!.toFixed(2)} ms over ${rounds} rounds`);
  }
} finally {
  await poster.close();
  for (const v of variants) {
    if (v.child && v.child.exitCode === null) {
      v.child.send({ cmd: 'stop' });
      await new Promise((r) => v.child!.once('exit', r));
    }
    if (v.data) await rm(v.data, { recursive: true, force: true });
  }
}
