// Runs ravenctl (cli/main.ts through tsx) as a process from any working directory, with only the
// environment given (plus PATH and NO_COLOR), so the user's RAVEN_* variables never leak in.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

export interface RavenctlRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RavenctlOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  input?: string | Buffer;
}

/** The command line that runs ravenctl: node, then its arguments (for a wrapper such as `script`). */
export function ravenctlCommand(args: string[]): [string, ...string[]] {
  // tsx by absolute URL: from another directory it would not be found.
  return [process.execPath, '--import', import.meta.resolve('tsx'), `${root}cli/main.ts`, ...args];
}

/** The environment ravenctl runs with: only what is given, so the user's RAVEN_* never leak in. */
export function ravenctlEnv(env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  // The repository's tsconfig by path: the SDK's package name maps to its sources through it.
  return { PATH: process.env.PATH ?? '', NO_COLOR: '1', TSX_TSCONFIG_PATH: `${root}tsconfig.json`, ...env };
}

export function spawnRavenctl(args: string[], options: RavenctlOptions = {}): ChildProcessWithoutNullStreams {
  const [node, ...nodeArgs] = ravenctlCommand(args);
  return spawn(node, nodeArgs, { cwd: options.cwd ?? root, env: ravenctlEnv(options.env) });
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

/** Resolves with the first complete JSON document the process prints on stdout. */
export function firstJsonDocument(child: ChildProcessWithoutNullStreams, timeoutMs = 20_000): Promise<any> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => reject(new Error(`no JSON document within ${timeoutMs} ms:\n${stdout}\n${stderr}`)), timeoutMs);
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
