/**
 * Every question ravenctl may ask, and the only module that imports @inquirer/prompts (lazily,
 * so commands that never ask do not load it).
 *
 * Each question has a non-interactive answer: when nobody can answer (stdin or stderr not a
 * terminal, --json, CI), asking is a usage error naming the flag that was missing (exit 2).
 * Prompts draw on stderr so stdout stays data only.
 */
import { UsageError } from './errors.js';

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

type Validate = (value: string) => true | string;

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
