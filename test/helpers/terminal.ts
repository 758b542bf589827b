// Runs ravenctl in a real pseudo-terminal (util-linux `script`, part of every Debian system), so
// its prompts show, and answers each one when its pattern appears on the screen.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ravenctlCommand, ravenctlEnv } from './ravenctl.js';

export interface TerminalRun {
  code: number | null;
  /** Everything the terminal showed. */
  screen: string;
  /** Answers whose prompt never showed. */
  unanswered: number;
}

/**
 * `answers`: [pattern, keys] in order; each is typed once its pattern shows (since the previous
 * answer). A prompt that never shows leaves the child waiting: the test's time-out (and `signal`)
 * turns that into a failure. No CI in the environment: the CLI never prompts under CI.
 */
export async function inTerminal(args: string[], env: NodeJS.ProcessEnv, answers: Array<[RegExp, string]>, signal: AbortSignal): Promise<TerminalRun> {
  const pending = [...answers];
  const command = ravenctlCommand(args).map((word) => `'${word}'`).join(' ');
  // A folder of its own, as every ravenctl the tests start (helpers/ravenctl.ts): never the checkout.
  const own = mkdtempSync(path.join(tmpdir(), 'ravenctl-tty-'));
  const child = spawn('script', ['-qfec', command, '/dev/null'], { env: ravenctlEnv({ TERM: process.env.TERM ?? 'xterm', ...env }, own), cwd: own });
  child.once('exit', () => rmSync(own, { recursive: true, force: true }));
  signal.addEventListener('abort', () => child.kill());
  let since = '';
  let screen = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    since += d;
    screen += d;
    const next = pending[0];
    if (next && next[0].test(since)) {
      pending.shift();
      since = '';
      child.stdin.write(next[1]);
    }
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, screen, unanswered: pending.length };
}
