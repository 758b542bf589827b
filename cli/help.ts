/**
 * The text after every command's --help: examples, then the exit codes and the error codes the
 * command can produce. Shared lists keep the codes spelled the way the API spells them.
 */
import { InvalidArgumentError, type Command } from 'commander';

/** Codes any call with an API key can meet. */
export const AUTH_CODES = ['invalid_api_key', 'forbidden', 'production_not_enabled'] as const;
/** Codes of a call that could not get an answer. */
export const NETWORK_CODES = ['connection_error', 'timeout'] as const;
/** Codes any admin call can meet. */
export const ADMIN_CODES = ['unauthorized', 'not_found', 'validation_error', 'internal_error'] as const;
export const USAGE_CODES = ['usage_error', 'missing_option'] as const;

export interface HelpSpec {
  /** Paragraph lines printed before the examples. */
  notes?: string[];
  examples: string[];
  /** Codes that exit 1 (the API or a verification said no). */
  refused?: readonly string[];
  /** Codes that exit 2 besides the generic usage errors. */
  usage?: readonly string[];
  /** Whether the command talks to the network (exit 3). */
  network?: boolean;
}

export function helpText(spec: HelpSpec): string {
  const lines = [...(spec.notes ? ['', ...spec.notes] : []), '', 'Examples:', ...spec.examples.map((e) => `  $ ${e}`), '', 'Exit codes:', '  0    success'];
  if (spec.refused && spec.refused.length > 0) {
    lines.push(withCodes('  1    refused: ', spec.refused));
  }
  lines.push(withCodes('  2    usage error: ', [...USAGE_CODES, ...(spec.usage ?? [])]));
  if (spec.network !== false) lines.push(withCodes('  3    network failure: ', NETWORK_CODES));
  lines.push('  130  interrupted (Ctrl-C)');
  lines.push('', 'With --json the result is one JSON document on stdout and errors are', '{"error":{"code","message","status"}} on stderr; without it, output is for people, piped or not.');
  return lines.join('\n');
}

/** `prefix` then the codes, comma separated, wrapped at 100 columns under the first code. */
function withCodes(prefix: string, codes: readonly string[]): string {
  const out: string[] = [];
  let line = '';
  for (const code of codes) {
    const next = line === '' ? code : `${line}, ${code}`;
    if (prefix.length + next.length > 100 && line !== '') {
      out.push(`${line},`);
      line = code;
    } else line = next;
  }
  out.push(line);
  return prefix + out.join(`\n${' '.repeat(prefix.length)}`);
}

export function addHelp(cmd: Command, spec: HelpSpec): Command {
  return cmd.addHelpText('after', helpText(spec));
}

/** Commander collector for repeatable flags: `--to a --to b`. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

export function parseIntegerOption(flag: string, min: number, max: number): (value: string) => number {
  return (value: string) => {
    // commander turns an InvalidArgumentError thrown by a parser into a usage error (exit 2).
    if (!/^-?\d+$/.test(value.trim())) throw new InvalidArgumentError(`${flag} must be an integer.`);
    const n = Number(value);
    if (n < min || n > max) throw new InvalidArgumentError(`${flag} must be between ${min} and ${max}.`);
    return n;
  };
}
