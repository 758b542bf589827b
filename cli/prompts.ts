/**
 * Every question ravenctl may ask, and the only module that imports @inquirer/prompts (lazily,
 * so commands that never ask do not load it).
 *
 * Each question has a non-interactive answer: when nobody can answer (stdin or stderr not a
 * terminal, --json, CI), asking is a usage error naming the flag that was missing (exit 2).
 * Prompts draw on stderr so stdout stays data only.
 */
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { InterruptedError, UsageError } from './errors.js';

export interface InteractivityInput {
  json: boolean;
  env?: NodeJS.ProcessEnv;
  stdin?: { isTTY?: boolean };
  stderr?: { isTTY?: boolean };
}

/** A person can answer: both terminals, not --json, not CI. */
export function isInteractive({ json, env = process.env, stdin = process.stdin, stderr = process.stderr }: InteractivityInput): boolean {
  if (json) return false;
  if (env.CI !== undefined && env.CI !== '' && env.CI !== '0' && env.CI !== 'false') return false;
  return stdin.isTTY === true && stderr.isTTY === true;
}

export function missingOption(flag: string): UsageError {
  return new UsageError(`missing required option ${flag}`, 'missing_option');
}

type Validate = (value: string) => true | string | Promise<true | string>;

const context = () => ({ input: process.stdin, output: process.stderr });

export interface Asker {
  interactive: boolean;
  /** Return `value` when set; else ask (interactive) or fail naming `flag`. */
  text(value: string | undefined, flag: string, message: string, validate?: Validate): Promise<string>;
  select<T extends string>(value: T | undefined, flag: string, message: string, choices: readonly T[]): Promise<T>;
  password(flag: string, message: string, validate?: Validate): Promise<string>;
  /** Multi-line text written in the person's $VISUAL / $EDITOR (a file ending in `postfix`). */
  editor(flag: string, message: string, postfix: string, validate?: Validate): Promise<string>;
  confirm(message: string, fallback: boolean): Promise<boolean>;
}

export function createAsker(interactive: boolean): Asker {
  return {
    interactive,
    async text(value, flag, message, validate) {
      if (value !== undefined && value !== '') return value;
      if (!interactive) throw missingOption(flag);
      const { input } = await import('@inquirer/prompts');
      return input({ message, required: true, validate: validate ?? (() => true) }, context());
    },
    async select(value, flag, message, choices) {
      if (value !== undefined) {
        if (!choices.includes(value)) {
          throw new UsageError(`option ${flag} must be one of: ${choices.join(', ')} (got "${value}")`);
        }
        return value;
      }
      if (!interactive) throw missingOption(flag);
      const { select } = await import('@inquirer/prompts');
      return select({ message, choices: choices.map((c) => ({ value: c, name: c })) }, context());
    },
    async password(flag, message, validate) {
      if (!interactive) throw missingOption(flag);
      const { password } = await import('@inquirer/prompts');
      return password({ message, mask: false, validate: validate ?? ((v) => (v === '' ? 'required' : true)) }, context());
    },
    async editor(flag, message, postfix, validate) {
      if (!interactive) throw missingOption(flag);
      const chosen = chosenEditor(process.env);
      // @inquirer's editor spawns it without an error handler: a missing program would crash the
      // command with everything typed so far, and leave its temp file. Check first, type inline instead.
      if (!commandExists(chosen.bin, process.env)) return typeInline(chosen, message, validate ?? (() => true));
      const { editor } = await import('@inquirer/prompts');
      return editor({ message, postfix, validate: validate ?? (() => true) }, context());
    },
    async confirm(message, fallback) {
      if (!interactive) return fallback;
      const { confirm } = await import('@inquirer/prompts');
      return confirm({ message, default: fallback }, context());
    },
  };
}

/** The editor @inquirer/external-editor runs: $VISUAL, else $EDITOR, else vim (notepad on Windows); its first word is the program. */
export function chosenEditor(env: NodeJS.ProcessEnv): { variable: string; value: string; bin: string } {
  const variable = env.VISUAL ? 'VISUAL' : env.EDITOR ? 'EDITOR' : '';
  const value = env.VISUAL || env.EDITOR || (process.platform.startsWith('win') ? 'notepad' : 'vim');
  return { variable, value, bin: value.trim().split(/(?<!\\) /)[0]!.replace(/\\ /g, ' ') };
}

/** Whether `bin` would start: a path that is executable, or a name found on PATH. */
export function commandExists(bin: string, env: NodeJS.ProcessEnv): boolean {
  const executable = (file: string) => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (bin.includes('/') || bin.includes(path.sep)) return executable(bin);
  const extensions = process.platform === 'win32' ? (env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';') : [''];
  return (env.PATH ?? '').split(path.delimiter).some((dir) => dir !== '' && extensions.some((ext) => executable(path.join(dir, bin + ext))));
}

/**
 * The body typed at the terminal when no editor can start: lines up to one holding only "." (or
 * Ctrl-D), checked like the editor's answer; says how to set an editor for next time.
 */
async function typeInline(chosen: { variable: string; value: string; bin: string }, message: string, validate: Validate): Promise<string> {
  const which = chosen.variable ? `$${chosen.variable} is "${chosen.value}", but ${chosen.bin} is not installed` : `no $VISUAL or $EDITOR is set and ${chosen.bin} is not installed`;
  process.stderr.write(
    `${which}: set one you have for next time (export EDITOR=nano, or vi, code --wait...).\n` +
      `${message.replace(/, written in your editor.*$/, '')}: type it here; end with a line holding only "." (or Ctrl-D).\n`,
  );
  for (;;) {
    const body = await readLinesUntilDot();
    const verdict = await validate(body);
    if (verdict === true) return body;
    process.stderr.write(`${verdict}: type it again.\n`);
  }
}

function readLinesUntilDot(): Promise<string> {
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: process.stdin.isTTY === true });
    const lines: string[] = [];
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      rl.close();
      resolve(lines.length === 0 ? '' : `${lines.join('\n')}\n`);
    };
    rl.on('line', (line) => (line === '.' ? finish() : lines.push(line)));
    rl.on('close', finish);
    rl.on('SIGINT', () => {
      done = true;
      rl.close();
      reject(new InterruptedError('interrupted: nothing was sent'));
    });
  });
}
