// The CPU the bench's processes use, from Linux's /proc (NaN elsewhere), shared by bench/run.ts
// and bench/postgres.ts.
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100; // USER_HZ

/** CPU seconds used so far by a process (all its threads) or one thread (`<pid>/task/<tid>`), `self` for this one; NaN once gone or off Linux. */
export function cpuSeconds(proc: string | number): number {
  try {
    const stat = readFileSync(`/proc/${proc}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND; // utime + stime
  } catch {
    return NaN;
  }
}

/** CPU seconds used so far by each thread of a process, by thread id (empty once gone or off Linux). */
export function threadCpuSeconds(pid: string | number): Map<string, number> {
  try {
    return new Map(readdirSync(`/proc/${pid}/task`).map((tid) => [tid, cpuSeconds(`${pid}/task/${tid}`)]));
  } catch {
    return new Map();
  }
}

/**
 * Waits until every relay idles (under 5 % of a core over a second, at most a minute): a relay
 * that has printed its ready document is still starting its worker and its threads, each loading
 * the relay's modules (under tsx, compiling them), seconds of CPU that would otherwise fall into
 * the measured window, once per relay (production relays start once and run for days).
 */
export async function settled(pids: number[]): Promise<void> {
  const until = performance.now() + 60_000;
  while (performance.now() < until) {
    const before = pids.map(cpuSeconds);
    await new Promise((r) => setTimeout(r, 1_000));
    // A process that is gone (NaN) has nothing left to settle.
    if (pids.every((pid, i) => !(cpuSeconds(pid) - before[i]! >= 0.05))) return;
  }
  console.log('  (relays still busy after a minute of waiting to settle)');
}

/** The processes whose parent is `parent` (empty off Linux). */
export function childPids(parent: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === parent) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** utime, stime, cutime and cstime of a process in seconds (cutime, cstime: its children's that it has reaped); undefined once gone. */
function ownAndReapedSeconds(pid: number): { own: number; reaped: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
    return { own: (fields[11]! + fields[12]!) / TICKS_PER_SECOND, reaped: (fields[13]! + fields[14]!) / TICKS_PER_SECOND };
  } catch {
    return undefined;
  }
}

/**
 * CPU seconds used so far by a server and every process it ever started (a PostgreSQL postmaster,
 * its backends, its parallel workers, its autovacuum): its own, its live children's, and those its
 * ended children left in its cutime/cstime when it reaped them. The sum only grows (read again
 * when a child was reaped during the reading), so a difference of two readings is never negative,
 * whatever connections closed between them; summing live children alone lost an ended backend's
 * time and subtracted what it had before. NaN when the server's /proc is not readable.
 */
export function serverTreeCpuSeconds(server: number): number {
  for (let tries = 0; tries < 5; tries++) {
    const before = ownAndReapedSeconds(server);
    if (before === undefined) return NaN;
    let children = 0;
    for (const pid of childPids(server)) {
      const seconds = cpuSeconds(pid);
      if (!Number.isNaN(seconds)) children += seconds;
    }
    const after = ownAndReapedSeconds(server);
    if (after?.reaped === before.reaped) return after.own + after.reaped + children;
  }
  return NaN;
}
