// Runs ravenctl as a process in a folder of its own (its working directory and home), with only the
// environment given (plus PATH and NO_COLOR): the developer's ./.raven (left by `npm run relay` in
// the checkout), RAVEN_* variables and profile never leak in. Under `npm test` it runs the sources
// the runner transpiled for this run (helpers/child-build.ts), else cli/main.ts through tsx.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

export interface RavenctlRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RavenctlOptions {
  /** Working directory (and HOME unless env names one); by default a new empty folder, removed when it exits. */
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  input?: string | Buffer;
}

/** The command line that runs ravenctl: node, then its arguments (for a wrapper such as `script`). */
export function ravenctlCommand(args: string[]): [string, ...string[]] {
  const built = process.env.RAVEN_TEST_CHILD_BUILD;
  if (built) return [process.execPath, path.join(built, 'cli', 'main.js'), ...args];
  // tsx by absolute URL: from another directory it would not be found.
  return [process.execPath, '--import', import.meta.resolve('tsx'), `${root}cli/main.ts`, ...args];
}

/**
 * The environment ravenctl runs with: only what is given, so the user's RAVEN_* never leak in,
 * and `home` as HOME and XDG_CONFIG_HOME's parent, so the user's profile is never read (without
 * HOME, os.homedir() would find the real one in the password database).
 */
export function ravenctlEnv(env: NodeJS.ProcessEnv, home: string): NodeJS.ProcessEnv {
  // The repository's tsconfig by path: the SDK's package name maps to its sources through it.
  const base = { PATH: process.env.PATH ?? '', NO_COLOR: '1', TSX_TSCONFIG_PATH: `${root}tsconfig.json` };
  return { ...base, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), ...env };
}

export function spawnRavenctl(args: string[], options: RavenctlOptions = {}): ChildProcessWithoutNullStreams {
  const [node, ...nodeArgs] = ravenctlCommand(args);
  // Never the checkout: a developer's relay keeps its ./.raven (admin token, database) there.
  const own = options.cwd === undefined ? mkdtempSync(path.join(tmpdir(), 'ravenctl-')) : undefined;
  const cwd = options.cwd ?? own!;
  const child = spawn(node, nodeArgs, { cwd, env: ravenctlEnv(options.env ?? {}, cwd) });
  if (own !== undefined) {
    const remove = () => rmSync(own, { recursive: true, force: true });
    child.once('exit', remove);
    child.once('error', remove);
  }
  return child;
}

export function ravenctl(args: string[], options: RavenctlOptions = {}): Promise<RavenctlRun> {
  return new Promise((resolve, reject) => {
    const child = spawnRavenctl(args, options);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input);
  });
}

/**
 * Resolves with the first complete JSON document the process prints on stdout. A process that has
 * printed none in time is killed: left running (a relay serving), it would keep its test file's
 * process, and with it the whole run, from ever exiting.
 */
export function firstJsonDocument(child: ChildProcessWithoutNullStreams, timeoutMs = 20_000): Promise<any> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no JSON document within ${timeoutMs} ms:\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      try {
        const document = JSON.parse(stdout);
        clearTimeout(timer);
        resolve(document);
      } catch {
        // not a whole document yet
      }
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      reject(new Error(`ravenctl exited ${code} before printing a document:\n${stdout}\n${stderr}`));
    });
  });
}
