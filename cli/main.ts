#!/usr/bin/env node
/**
 * ravenctl entry point. `--version` alone is answered before the command tree (commander, the
 * program, the error model) is loaded: it is what scripts call most often and it needs none of it.
 * Everything else runs in cli/run.ts.
 */
import { version } from './version.js';

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  process.stdout.write(`${version()}\n`);
} else {
  const { runAndExit } = await import('./run.js');
  await runAndExit(process.argv);
}
