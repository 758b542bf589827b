/**
 * The one module that decides between human output and JSON.
 *
 * stdout carries data only: one JSON document in JSON mode, tables and blocks otherwise.
 * Hints, spinners and errors go to stderr. Colours only when the stream is a terminal and
 * NO_COLOR is not set (FORCE_COLOR forces them on).
 */
import type { EmailEvent } from 'raven-email-sdk';
import { CliError, errorToHuman, errorToJson } from './errors.js';

export interface OutputStream {
  write(chunk: string): unknown;
  isTTY?: boolean;
}

export interface OutputOptions {
  /** `true` for --json; `false` (--no-json) or undefined for human output. */
  json?: boolean;
  stdout?: OutputStream;
  stderr?: OutputStream;
  env?: NodeJS.ProcessEnv;
}

/** JSON only when asked for with --json; human output otherwise, piped or not. */
export function wantsJson(json: boolean | undefined, stdout: OutputStream = process.stdout): boolean {
  // JSON only when asked: CONTRACT section 7 fixes the human output of piped commands too
  // (`webhooks sign` prints two header lines). Off a terminal, human output drops colour.
  void stdout;
  return json === true;
}

/** NO_COLOR (https://no-color.org) wins, then FORCE_COLOR, then "is it a terminal". */
export function colorEnabled(stream: OutputStream, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0' && env.FORCE_COLOR !== 'false') return true;
  if (env.TERM === 'dumb') return false;
  return stream.isTTY === true;
}

const ANSI = {
  bold: [1, 22],
  dim: [2, 22],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  blue: [34, 39],
  magenta: [35, 39],
  cyan: [36, 39],
  gray: [90, 39],
} as const;
export type Style = keyof typeof ANSI;

export type Paint = (style: Style, text: string) => string;

export function painter(enabled: boolean): Paint {
  return (style, text) => (enabled ? `\u001b[${ANSI[style][0]}m${text}\u001b[${ANSI[style][1]}m` : text);
}

// eslint-disable-next-line no-control-regex
const ANSI_PATTERN = /\u001b\[[0-9;]*m/g;

export function visibleWidth(text: string): number {
  return [...text.replace(ANSI_PATTERN, '')].length;
}

function pad(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - visibleWidth(text)));
}

/** Statuses (email and recipient) by how they should catch the eye. */
export function statusStyle(status: string): Style {
  switch (status) {
    case 'delivered':
    case 'sent':
      return 'green';
    case 'queued':
    case 'delivery_delayed':
      return 'yellow';
    case 'bounced':
    case 'failed':
    case 'complained':
    case 'suppressed':
      return 'red';
    case 'delivery_unknown':
      return 'magenta';
    default:
      return 'cyan';
  }
}

export interface Column<T> {
  header: string;
  value: (row: T) => string;
  /** Optional colouring applied after the width is measured. */
  style?: (row: T, text: string) => Style | undefined;
  /** Truncate longer cells (with an ellipsis). */
  maxWidth?: number;
}

function truncate(text: string, max: number | undefined): string {
  if (max === undefined) return text;
  const chars = [...text];
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : text;
}

/** Columns aligned on the widest cell, two spaces apart, bold headers. */
export function renderTable<T>(columns: Column<T>[], rows: T[], paint: Paint): string {
  const cells = rows.map((row) => columns.map((c) => truncate(oneLine(c.value(row)), c.maxWidth)));
  const widths = columns.map((c, i) => Math.max(visibleWidth(c.header), ...cells.map((r) => visibleWidth(r[i] ?? ''))));
  const lines = [columns.map((c, i) => pad(paint('bold', c.header), widths[i] ?? 0)).join('  ').trimEnd()];
  rows.forEach((row, r) => {
    const line = columns.map((c, i) => {
      const text = cells[r]?.[i] ?? '';
      const style = c.style?.(row, text);
      return pad(style ? paint(style, text) : text, widths[i] ?? 0);
    });
    lines.push(line.join('  ').trimEnd());
  });
  return lines.join('\n');
}

/** `Label   value` lines, labels aligned. Undefined/null values are left out. */
/** A word as a POSIX shell reads it back unchanged: bare when safe, else single-quoted. */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

export function renderFields(fields: Array<[string, string | undefined | null]>, paint: Paint): string {
  const present = fields.filter((f): f is [string, string] => f[1] !== undefined && f[1] !== null);
  const width = Math.max(0, ...present.map(([label]) => label.length));
  return present.map(([label, value]) => `${paint('dim', label.padEnd(width))}  ${value}`).join('\n');
}

/** One line per event, oldest first: time, a marker coloured by outcome, type, a payload summary. */
export function renderTimeline(events: EmailEvent[], paint: Paint): string {
  if (events.length === 0) return paint('dim', '  (no events)');
  const typeWidth = Math.max(...events.map((e) => e.type.length));
  return events
    .map((e) => {
      const outcome = e.type.replace(/^email\./, '');
      const marker = paint(statusStyle(outcome), '●');
      const summary = summarizePayload(e.payload);
      return `  ${paint('dim', e.occurredAt)}  ${marker} ${e.type.padEnd(typeWidth)}${summary ? `  ${summary}` : ''}`.trimEnd();
    })
    .join('\n');
}

function summarizePayload(payload: unknown): string {
  if (typeof payload !== 'object' || payload === null) return '';
  return Object.entries(payload as Record<string, unknown>)
    .filter(([, v]) => v !== null && v !== undefined && typeof v !== 'object')
    .map(([k, v]) => `${k}=${typeof v === 'string' && /\s/.test(v) ? JSON.stringify(v) : String(v)}`)
    .join(' ');
}

function oneLine(text: string): string {
  return text.replace(/[\r\n\u0085\u2028\u2029]+/g, ' ');
}

/** What a command writes. Built once per run from the global flags. */
export class Output {
  readonly json: boolean;
  readonly paint: Paint;
  readonly paintErr: Paint;
  readonly stdout: OutputStream;
  readonly stderr: OutputStream;
  private printedJson = false;

  constructor(options: OutputOptions = {}) {
    this.stdout = options.stdout ?? process.stdout;
    this.stderr = options.stderr ?? process.stderr;
    const env = options.env ?? process.env;
    this.json = wantsJson(options.json, this.stdout);
    this.paint = painter(!this.json && colorEnabled(this.stdout, env));
    this.paintErr = painter(colorEnabled(this.stderr, env));
  }

  /**
   * The command's result: `value` as one JSON document, or `human()` rendered for people.
   * Call once per command.
   */
  result(value: unknown, human: () => string): void {
    if (this.json) {
      if (this.printedJson) throw new Error('bug: a command printed two JSON documents');
      this.printedJson = true;
      this.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
      return;
    }
    const text = human();
    if (text !== '') this.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  /** A note for people (on stderr, so it never mixes into data). Silent in JSON mode. */
  hint(message: string): void {
    if (!this.json) this.stderr.write(`${this.paintErr('dim', message)}\n`);
  }

  /** A warning on stderr for people. Silent in JSON mode, where stderr holds only an error document. */
  warn(message: string): void {
    if (!this.json) this.stderr.write(`${this.paintErr('yellow', 'warning:')} ${message}\n`);
  }

  error(err: CliError): void {
    if (this.json) this.stderr.write(`${JSON.stringify(errorToJson(err))}\n`);
    else this.stderr.write(`${this.paintErr('red', errorToHuman(err))}\n`);
  }

  /** A spinner on stderr, only when stderr is a terminal and a person reads the output. */
  spinner(text: string): Spinner {
    return new Spinner(this.stderr, !this.json && this.stderr.isTTY === true, text);
  }
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export class Spinner {
  private timer: NodeJS.Timeout | undefined;
  private frame = 0;

  constructor(
    private readonly stream: OutputStream,
    private readonly enabled: boolean,
    private text: string,
  ) {
    if (enabled) {
      this.timer = setInterval(() => this.render(), 80);
      this.timer.unref();
      this.render();
    }
  }

  update(text: string): void {
    this.text = text;
  }

  stop(): void {
    if (!this.enabled) return;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.stream.write('\r\u001b[2K');
  }

  private render(): void {
    this.frame = (this.frame + 1) % FRAMES.length;
    this.stream.write(`\r\u001b[2K${FRAMES[this.frame]} ${this.text}`);
  }
}

/** `rr_test_…abcd`: enough to recognise a key, never enough to use it. */
export function redactKey(key: string): string {
  const match = /^(rr_(?:test|live)_)(.*)$/.exec(key);
  const prefix = match?.[1] ?? '';
  const rest = match?.[2] ?? key;
  return rest.length <= 4 ? `${prefix}…` : `${prefix}…${rest.slice(-4)}`;
}
