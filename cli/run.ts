/**
 * Runs ravenctl: build the command tree, load the one leaf argv selects, run it, and turn whatever it
 * threw into an exit code (cli/errors.ts decides which).
 */
import { setFlagsFromString } from 'node:v8';
import { CliError, ExitCode, isCommanderDisplayExit, toCliError, type SdkErrorClasses } from './errors.js';
import { Output } from './output.js';
import { createProgram, jsonFlagOf, loadLeaf, selectLeaf } from './program.js';

async function sdkErrorClasses(): Promise<SdkErrorClasses | undefined> {
  try {
    return await import('raven-email-sdk');
  } catch {
    return undefined;
  }
}

function isPlainCliOrUsage(err: unknown): boolean {
  return err instanceof CliError || (err instanceof Error && String((err as { code?: unknown }).code).startsWith('commander.'));
}

/** Let buffered output reach the pipe before exiting. */
async function flush(): Promise<void> {
  const drain = (stream: NodeJS.WriteStream) =>
    new Promise<void>((resolve) => (stream.writableNeedDrain ? stream.once('drain', resolve) : resolve()));
  await Promise.all([drain(process.stdout), drain(process.stderr)]);
}

export async function run(argv: string[]): Promise<number> {
  const args = argv.slice(2);
  const program = createProgram();
  const leaf = selectLeaf(args);

  // A command that makes a few requests and exits: V8 would compile undici's HTTP parser
  // (WebAssembly) with Liftoff, then again with its optimising tier on background threads, and wait
  // for those at exit: 0.25 of the 0.65 CPU s and 0.2 of the 0.6 s wall a `ravenctl send` took.
  // Liftoff's code parses a few responses as fast. What serves until stopped keeps both tiers.
  // (Set before anything compiles WebAssembly, which is when V8 reads it.)
  if (!leaf?.serves) setFlagsFromString('--liftoff-only');

  // Ctrl-C while waiting on the network or polling: exit 130. `relay start` handles signals itself.
  if (leaf?.path.join(' ') !== 'relay start') {
    process.once('SIGINT', () => {
      if (process.stderr.isTTY) process.stderr.write('\n');
      process.exit(ExitCode.interrupted);
    });
  }

  try {
    if (leaf) await loadLeaf(program, leaf);
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : ExitCode.ok;
  } catch (err) {
    if (isCommanderDisplayExit(err)) return ExitCode.ok;
    const cliError = toCliError(err, isPlainCliOrUsage(err) ? undefined : await sdkErrorClasses());
    new Output({ json: jsonFlagOf(args) }).error(cliError);
    return cliError.exitCode;
  }
}

/** Runs argv to its end and exits with its code, once buffered output has reached the pipe. */
export async function runAndExit(argv: string[]): Promise<never> {
  const code = await run(argv);
  await flush();
  process.exit(code);
}
