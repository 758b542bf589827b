// `npm test`: the whole suite on SQLite, then the relay's integration and end-to-end suites again
// on PostgreSQL with the multi-relay tests (the backend matrix, CONTRACT section 6). One
// PostgreSQL server serves the PostgreSQL run (each test relay gets a database of its own): the
// one RAVEN_TEST_DATABASE_URL names, or else one started here in a temporary directory and
// stopped at the end.
//
//   npm test                          both backends
//   npm test -- --backend postgres    one backend (sqlite | postgres)
//   npm test -- test/x.test.ts ...    these files only, on the backends selected
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startPostgresServer, type PostgresServer } from './helpers/postgres-server.js';

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
  'test/e2e/cli-webhooks.test.ts',
]);

const SUITES = {
  sqlite: [...files('unit'), ...files('integration'), ...files('e2e'), ...files('browser')],
  postgres: [...files('integration'), ...files('e2e')].filter((f) => !SQLITE_ONLY.has(f)).concat(files('postgres')),
};

function parseArgs(argv: string[]) {
  let backends: Array<keyof typeof SUITES> = ['sqlite', 'postgres'];
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

function runNodeTest(testFiles: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve) => {
    // temp-guard: each test file gets a temp folder of its own and fails when it leaves anything there.
    const child = spawn(process.execPath, ['--import', 'tsx', '--import', './test/helpers/temp-guard.ts', '--test', '--test-concurrency=2', ...testFiles], {
      cwd: root,
      env,
      stdio: 'inherit',
    });
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

async function main(): Promise<number> {
  const { backends, only } = parseArgs(process.argv.slice(2));
  let server: PostgresServer | undefined;
  let failed = 0;
  try {
    for (const backend of backends) {
      const selected = only.length > 0 ? SUITES[backend].filter((f) => only.includes(f)) : SUITES[backend];
      if (selected.length === 0) continue;
      const env: NodeJS.ProcessEnv = { ...process.env, RAVEN_TEST_BACKEND: backend };
      if (backend === 'postgres' && !env.RAVEN_TEST_DATABASE_URL) {
        server ??= await startPostgresServer();
        env.RAVEN_TEST_DATABASE_URL = server.url;
      }
      process.stderr.write(`\n== ${selected.length} test files on ${backend} ==\n`);
      const code = await runNodeTest(selected, env);
      if (code !== 0) failed++;
    }
  } finally {
    await server?.stop();
  }
  return failed === 0 ? 0 : 1;
}

process.exitCode = await main();
