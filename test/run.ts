// `npm test`: the whole suite on SQLite, and the relay's integration and end-to-end suites again
// on PostgreSQL with the multi-relay tests (the backend matrix, CONTRACT section 6). One pool runs
// them all, FILES_AT_ONCE test files at a time, each file in a node process of its own with its
// backend in its environment. One PostgreSQL server serves the PostgreSQL runs (each test relay
// gets a database of its own): the one RAVEN_TEST_DATABASE_URL names, or else one started here in
// a temporary directory and stopped at the end. Before the files start, the run migrates one
// SQLite database and one PostgreSQL database, and each test relay's database is a copy of one of
// them (helpers/backend.ts), not a database migrated again from nothing.
//
//   npm test                          both backends
//   npm test -- --backend postgres    one backend (sqlite | postgres)
//   npm test -- test/x.test.ts ...    these files only, on the backends selected
//
// The output is node:test's TAP of each file, printed whole when the file ends under a line naming
// it, its backend and its time; the last lines are one summary over every run: the slowest files,
// the plain `tests: N passed, N failed` line (what CI reads), then each failing test with its
// backend and file. Any failure exits 1.
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildChildTree } from './helpers/child-build.js';
import { makeDkimKeyPool } from './helpers/dkim-keys.js';
import { createTestDatabase, startPostgresServer, type PostgresServer } from './helpers/postgres-server.js';
import { openDatabase } from '../relay/storage/db.js';
import { openPostgres } from '../relay/storage/postgres/db.js';

/** What helpers/summary-reporter.mjs writes for each finished test, one JSON line each. */
interface SummaryLine {
  result: 'passed' | 'failed' | 'skipped';
  name: string;
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const files = (dir: string) =>
  readdirSync(path.join(root, 'test', dir))
    .filter((f) => f.endsWith('.test.ts'))
    .sort()
    .map((f) => `test/${dir}/${f}`);

// What only SQLite has: its file locks, its own fault injection, the relay process on a data
// directory. PostgreSQL's counterparts (server restart, kill -9 with leases) are in test/postgres.
// And what runs no relay at all (type-checking SDK consumers, ravenctl's offline commands). The
// dashboard's browser tests (test/browser) run on SQLite only: a browser per test file is the
// slowest part of the suite.
const SQLITE_ONLY = new Set([
  'test/integration/storage-faults.test.ts',
  'test/integration/crash.test.ts',
  'test/e2e/cli-relay.test.ts',
  'test/e2e/cli-relay-production.test.ts',
  'test/e2e/sdk-package.test.ts',
  'test/e2e/cli-first-run.test.ts',
  'test/e2e/cli-commands.test.ts',
  'test/e2e/cli-isolation.test.ts',
  'test/e2e/build-swap.test.ts',
  'test/e2e/cli-webhooks.test.ts',
]);

// The files that read the checkout itself (its README, its .raven, sdk/ to pack, dist/ to rebuild,
// sources to read as text, TypeScript entries to start) run from it through tsx; every other file
// runs from the run's transpiled copy (helpers/child-build.ts) without tsx's loader, about one
// CPU second less a file (the unit tests that read nothing of the checkout: 60.8 -> 37.2 CPU s).
const FROM_CHECKOUT = new Set([
  'test/unit/backend-placement.test.ts',
  'test/unit/import-graph.test.ts',
  'test/unit/migration-numbers.test.ts',
  'test/unit/openapi.test.ts',
  'test/unit/relay-config.test.ts',
  'test/unit/settings-table.test.ts',
  'test/unit/sql-placement.test.ts',
  'test/unit/temp-guard.test.ts',
  'test/unit/thread-pool.test.ts',
  'test/e2e/build-swap.test.ts',
  'test/e2e/readme-signup.test.ts',
  'test/e2e/cli-isolation.test.ts',
  'test/e2e/cli-relay.test.ts',
  'test/e2e/sdk-package.test.ts',
]);

// The pool starts the files in the order given, FILES_AT_ONCE at a time: the folders whose files run
// browsers or several relays (the longest, up to a minute each) go first, so none of them is left
// running alone at the end with the other slots idle; and the two backends' lists alternate, so the
// browsers (busy on the CPU) run beside PostgreSQL's multi-relay files (waiting out leases and
// restarts), and no backend's last files run alone before the other's first.
const SUITES = {
  sqlite: [...files('browser'), ...files('e2e'), ...files('integration'), ...files('unit')],
  postgres: [...files('postgres'), ...files('e2e'), ...files('integration')].filter((f) => !SQLITE_ONLY.has(f)),
};
type Backend = keyof typeof SUITES;

/** The lists' items in turn: a, b, a, b... then the rest of the longer. */
function alternate<T>(lists: T[][]): T[] {
  const out: T[] = [];
  for (let i = 0; lists.some((l) => i < l.length); i++) for (const l of lists) if (i < l.length) out.push(l[i]!);
  return out;
}

function parseArgs(argv: string[]) {
  let backends: Backend[] = ['sqlite', 'postgres'];
  const only: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--backend') {
      const value = argv[++i];
      if (value !== 'sqlite' && value !== 'postgres') throw new Error(`--backend must be sqlite or postgres, got "${value}"`);
      backends = [value];
    } else only.push(path.relative(root, path.resolve(argv[i]!)));
  }
  return { backends, only };
}

/**
 * The tests' own knobs (test/helpers/backend.ts, browser.ts, delivery-harness.ts, crash.test.ts);
 * every other RAVEN_* variable is a relay or CLI setting of the developer's shell (an admin token,
 * an API key, a base URL...) that code under test reading process.env would pick up.
 */
const TEST_KNOBS = new Set(['RAVEN_TEST_BACKEND', 'RAVEN_TEST_DATABASE_URL', 'RAVEN_TEST_LOG', 'RAVEN_CHROMIUM', 'RAVEN_CRASH_CYCLES', 'RAVEN_CRASH_KEEP']);

function developerFree(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith('RAVEN_') || TEST_KNOBS.has(name)));
}

// Files run at once. Two left a core idle while files waited on their relays, browsers and
// servers (the integration folder on SQLite: 179 s at 170 % of 2 cores; with three, 165 s at 191 %).
// Four, tried in session 16 on clean-clone runs of the whole suite: 1,060 s of wall and 1,596 CPU s
// in the files against three's 980 s and 1,463 (the files' own CPU grows with the contention); and
// again in session 18: 811 s and 1,161 CPU s against three's 806 s and 1,131.
const FILES_AT_ONCE = 3;

/**
 * The test files' temp folders (their relays' data directories, databases and servers) in memory
 * where the machine has a tmpfs: each commit's fsync then costs no disk write (about 5 % of the
 * CPU of the files that commit most, measured at load 4). A process killed by a test keeps what
 * it wrote either way; only a power loss would not, which no test makes. Traversable by other
 * users: the PostgreSQL tests run a server as `postgres` below it.
 */
function inMemoryTempFolder(): string | undefined {
  try {
    const folder = mkdtempSync('/dev/shm/raven-test-run-');
    chmodSync(folder, 0o711);
    return folder;
  } catch {
    return undefined; // no tmpfs there: the system's temp folder
  }
}

/** One test file on one backend. */
interface Job {
  backend: Backend;
  file: string;
}

/** What a file's run left: its exit code, what the summary reporter wrote, its time. */
interface Outcome {
  code: number;
  lines: SummaryLine[];
  ms: number;
  /** CPU time (user + system) of the file's process and every process it started and waited for
   * (relays, ravenctl, browsers; not the shared PostgreSQL server); NaN when not known. */
  cpuMs: number;
}

/** bash's `times`: its own user and system time, then its children's (`0m1.250s 0m0.040s`). */
function cpuMsFromTimes(text: string): number {
  const lines = text.trim().split('\n');
  const children = lines[lines.length - 1]?.match(/(\d+)m([\d.]+)s\s+(\d+)m([\d.]+)s/);
  if (!children) return Number.NaN;
  const [, um, us, sm, ss] = children;
  return (Number(um) * 60 + Number(us) + Number(sm) * 60 + Number(ss)) * 1000;
}

/**
 * Runs one test file in a node process of its own (as `node --test` would, without a parent
 * process per file), its TAP collected and printed whole when it ends, so the files running at
 * once do not interleave their lines.
 */
function runFile(job: Job, env: NodeJS.ProcessEnv, reportFile: string): Promise<Outcome> {
  const reporters = ['--test-reporter=tap', '--test-reporter-destination=stdout', '--test-reporter=./test/helpers/summary-reporter.mjs', `--test-reporter-destination=${reportFile}`];
  const started = Date.now();
  return new Promise((resolve) => {
    // temp-guard: each test file gets a temp folder of its own and fails when it leaves anything there.
    // The node process runs under bash, whose `times` (written to fd 3 once node exits; node itself
    // runs without that fd) gives the CPU time of the node process and of everything it waited for.
    const compiled = (file: string) => path.join(env.RAVEN_TEST_CHILD_BUILD!, file.replace(/\.ts$/, '.js'));
    const code = FROM_CHECKOUT.has(job.file)
      ? ['--import', 'tsx', '--import', './test/helpers/temp-guard.ts', ...reporters, job.file]
      : ['--import', compiled('test/helpers/temp-guard.ts'), ...reporters, compiled(job.file)];
    const argv = [process.execPath, ...code];
    const child = spawn('bash', ['-c', '"$@" 3>&-; status=$?; times >&3; exit $status', 'bash', ...argv], {
      cwd: root,
      env: { ...env, RAVEN_TEST_BACKEND: job.backend, RAVEN_TEST_TEMP_GUARD: '1' },
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    });
    const output: Buffer[] = [];
    let times = '';
    child.stdout!.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr!.on('data', (chunk: Buffer) => output.push(chunk));
    (child.stdio[3] as NodeJS.ReadableStream).on('data', (chunk: Buffer) => (times += chunk.toString()));
    child.once('close', (code, signal) => {
      const ms = Date.now() - started;
      const cpuMs = cpuMsFromTimes(times);
      process.stdout.write(`\n# ${job.file} on ${job.backend}: ${(ms / 1000).toFixed(1)} s, CPU ${(cpuMs / 1000).toFixed(1)} s, exit ${code ?? signal}\n`);
      process.stdout.write(Buffer.concat(output));
      resolve({ code: code ?? 1, lines: readReport(reportFile), ms, cpuMs });
    });
  });
}

function readReport(file: string): SummaryLine[] {
  try {
    return readFileSync(file, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as SummaryLine);
  } catch {
    return []; // no report: the process crashed before its reporter wrote anything
  }
}

/** Runs the jobs, `width` at a time, in their order; answers their outcomes in the same order. */
async function pool(jobs: Job[], width: number, run: (job: Job, index: number) => Promise<Outcome>): Promise<Outcome[]> {
  const outcomes: Outcome[] = new Array(jobs.length);
  let next = 0;
  const lane = async () => {
    while (next < jobs.length) {
      const index = next++;
      outcomes[index] = await run(jobs[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, jobs.length) }, lane));
  return outcomes;
}

interface Failure {
  backend: string;
  what: string;
}

const SLOWEST_SHOWN = 8;

type Timed = Job & { ms: number; cpuMs: number };

/** The summary over every run, last: the slowest files, the plain count line CI reads, then what failed where. */
function printSummary(counts: Record<SummaryLine['result'], number>, failures: Failure[], times: Timed[], wallMs: number): void {
  const skipped = counts.skipped > 0 ? `, ${counts.skipped} skipped` : '';
  const slowest = [...times].sort((a, b) => b.ms - a.ms).slice(0, SLOWEST_SHOWN);
  const seconds = (ms: number) => (ms / 1000).toFixed(1).padStart(6);
  const cpuTotal = times.reduce((sum, t) => sum + t.cpuMs, 0);
  const lines = ['', `test files: ${seconds(wallMs).trim()} s wall, ${seconds(cpuTotal).trim()} s CPU in them; the slowest (wall, CPU):`];
  for (const t of slowest) lines.push(`  ${seconds(t.ms)} s ${seconds(t.cpuMs)} s  ${t.backend.padEnd(8)} ${t.file}`);
  lines.push('', `tests: ${counts.passed} passed, ${failures.length} failed${skipped}`);
  for (const f of failures) lines.push(`  FAILED on ${f.backend}: ${f.what}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

async function main(): Promise<number> {
  const { backends, only } = parseArgs(process.argv.slice(2));
  let server: PostgresServer | undefined;
  let template: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  const reports = mkdtempSync(path.join(tmpdir(), 'raven-test-report-'));
  const counts = { passed: 0, failed: 0, skipped: 0 };
  const failures: Failure[] = [];
  const times: Timed[] = [];
  let wallMs = 0;
  const env: NodeJS.ProcessEnv = developerFree(process.env);
  // Node reads NODE_EXTRA_CA_CERTS's bundle at every start, TLS or not (0.07 CPU s a process on
  // these machines, hundreds of processes a run); no test reaches a host such a CA would vouch for.
  delete env.NODE_EXTRA_CA_CERTS;
  const memoryTemp = inMemoryTempFolder();
  if (memoryTemp) env.TMPDIR = memoryTemp;
  const selected = (backend: Backend) => (only.length > 0 ? SUITES[backend].filter((f) => only.includes(f)) : SUITES[backend]);
  // The PostgreSQL server (initdb, seconds) starts while the sources are transpiled.
  const serverStarting = backends.includes('postgres') && selected('postgres').length > 0 && !env.RAVEN_TEST_DATABASE_URL ? startPostgresServer() : undefined;
  serverStarting?.catch(() => undefined); // awaited below, where its failure is reported
  try {
    // The sources the tests' ravenctl and relay processes run, transpiled once for this run.
    const childBuild = path.join(reports, 'children');
    // The test relays' DKIM key pairs (helpers/dkim-keys.ts), made on libuv's threads meanwhile.
    const dkimKeys = path.join(reports, 'dkim-keys.json');
    const keysMade = makeDkimKeyPool(dkimKeys);
    keysMade.catch(() => undefined); // awaited below
    await buildChildTree(root, childBuild);
    env.RAVEN_TEST_CHILD_BUILD = childBuild;
    await keysMade;
    env.RAVEN_TEST_DKIM_KEYS = dkimKeys;
    // Every test relay's database starts as a copy of one migrated here (helpers/backend.ts).
    const sqliteTemplate = path.join(reports, 'template.sqlite');
    await (await openDatabase(sqliteTemplate)).close();
    env.RAVEN_TEST_SQLITE_TEMPLATE = sqliteTemplate;
    const lists: Job[][] = [];
    for (const backend of backends) {
      const files = selected(backend);
      if (files.length === 0) continue;
      if (backend === 'postgres' && serverStarting) {
        try {
          server = await serverStarting;
          env.RAVEN_TEST_DATABASE_URL = server.url;
        } catch (error) {
          failures.push({ backend, what: `PostgreSQL did not start: ${(error as Error).message}` });
          continue;
        }
      }
      if (backend === 'postgres') {
        template = await createTestDatabase(env.RAVEN_TEST_DATABASE_URL!);
        await (await openPostgres({ url: template.url, onError: () => undefined })).close();
        env.RAVEN_TEST_DATABASE_TEMPLATE = new URL(template.url).pathname.slice(1);
      }
      lists.push(files.map((file) => ({ backend, file })));
    }
    const jobs = alternate(lists);
    process.stderr.write(`\n== ${lists.map((l) => `${l.length} test files on ${l[0]!.backend}`).join(', ')}, ${FILES_AT_ONCE} at a time ==\n`);
    const poolStarted = Date.now();
    const outcomes = await pool(jobs, FILES_AT_ONCE, (job, index) => runFile(job, env, path.join(reports, `${index}.jsonl`)));
    wallMs = Date.now() - poolStarted;
    outcomes.forEach(({ code, lines, ms, cpuMs }, index) => {
      const job = jobs[index]!;
      times.push({ ...job, ms, cpuMs });
      for (const line of lines) {
        counts[line.result]++;
        if (line.result === 'failed') failures.push({ backend: job.backend, what: `${job.file}: ${line.name}` });
      }
      // A file can fail with no failing test to name (a crash, temp files left behind).
      if (code !== 0 && !lines.some((l) => l.result === 'failed')) failures.push({ backend: job.backend, what: `${job.file}: exited ${code}; see its output above` });
    });
  } finally {
    await template?.drop();
    server ??= await serverStarting?.catch(() => undefined);
    await server?.stop();
    rmSync(reports, { recursive: true, force: true });
    if (memoryTemp) rmSync(memoryTemp, { recursive: true, force: true });
  }
  printSummary(counts, failures, times, wallMs);
  return failures.length === 0 ? 0 : 1;
}

process.exitCode = await main();
