// Runs a command with this process's output, for the build scripts that run several side by side.
import { spawn } from 'node:child_process';

/** Resolves when the command exits 0; rejects, naming it, when it fails. */
export function runCommand(command, args, cwd) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: 'inherit' });
    child.once('error', reject);
    child.once('exit', (code, signal) => (code === 0 ? resolve() : reject(new Error(`${[command, ...args].join(' ')} failed (${code ?? signal})`))));
  });
}
