// Runs the relay as a real child process (`ravenctl relay start --json`, helpers/ravenctl.ts), so a test can
// kill -9 it and start it again on the same data directory.
import type { ChildProcess } from 'node:child_process';
import { spawnRavenctl } from './ravenctl.js';

export interface RelayProcess {
  child: ChildProcess;
  httpUrl: string;
  /** The parsed `--json` document. */
  ready: any;
  /** Everything the process wrote to stderr so far (for failure messages). */
  stderr(): string;
  /** SIGKILL, resolved once the process is gone. */
  kill9(): Promise<void>;
  /** SIGTERM (graceful stop), resolved with the exit code. */
  stop(timeoutMs?: number): Promise<number | null>;
}

export interface RelayProcessOptions {
  dataDir: string;
  adminToken: string;
  config?: string;
  extraArgs?: string[];
  startTimeoutMs?: number;
  /** More environment for the relay (e.g. NODE_OPTIONS for a profile), beside RAVEN_LOG_LEVEL. */
  env?: Record<string, string>;
}

export function startRelayProcess(options: RelayProcessOptions): Promise<RelayProcess> {
  const args = [
    'relay', 'start',
    '--data-dir', options.dataDir,
    '--port', '0',
    '--smtp-port', '0',
    '--admin-token', options.adminToken,
    '--json',
    ...(options.config ? ['--config', options.config] : []),
    ...(options.extraArgs ?? []),
  ];
  // Only what the relay is given: none of the developer's (or the runner's) RAVEN_* variables.
  const child = spawnRavenctl(args, { env: { RAVEN_LOG_LEVEL: 'error', ...options.env } });
  child.stdin.end();
  let stdout = '';
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );

  return new Promise<RelayProcess>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      child.kill('SIGKILL');
      reject(new Error(`relay did not print its ready document within ${options.startTimeoutMs ?? 20_000} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, options.startTimeoutMs ?? 20_000);
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (settled) return;
      let ready: any;
      try {
        ready = JSON.parse(stdout);
      } catch {
        return; // not complete yet
      }
      settled = true;
      clearTimeout(timer);
      resolve({
        child,
        httpUrl: ready.http_url,
        ready,
        stderr: () => stderr,
        async kill9() {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
          await exited;
        },
        async stop(timeoutMs = 15_000) {
          if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
          child.kill('SIGTERM');
          const t = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
          const { code } = await exited;
          clearTimeout(t);
          return code;
        },
      });
    });
    void exited.then(({ code, signal }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(new Error(`relay exited before it was ready (code ${code}, signal ${signal})\nstdout: ${stdout}\nstderr: ${stderr}`));
    });
  });
}
