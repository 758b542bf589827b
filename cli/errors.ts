/**
 * Every way ravenctl can fail, and the one place a failure becomes an exit code.
 *
 * Commands throw typed errors; `toCliError` turns anything thrown (SDK errors, commander usage
 * errors, prompt cancellations) into a CliError, whose `exitCode` is what the process exits with:
 *   0 success · 1 the API or a verification said no · 2 usage error · 3 network failure · 130 Ctrl-C
 */

export const ExitCode = {
  ok: 0,
  refused: 1,
  usage: 2,
  network: 3,
  interrupted: 130,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export interface CliErrorOptions {
  /** HTTP status when the error came from a response, else null. */
  status?: number | null;
  requestId?: string | null;
  details?: Array<{ field: string; message: string }>;
  retryAfter?: number | null;
  cause?: unknown;
}

export class CliError extends Error {
  override name = 'CliError';
  readonly status: number | null;
  readonly requestId: string | null;
  readonly details: Array<{ field: string; message: string }>;
  readonly retryAfter: number | null;

  constructor(
    /** Machine-readable code: the API's error code, a webhook verification reason, or a CLI code. */
    readonly code: string,
    message: string,
    readonly exitCode: ExitCode,
    options: CliErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = options.status ?? null;
    this.requestId = options.requestId ?? null;
    this.details = options.details ?? [];
    this.retryAfter = options.retryAfter ?? null;
  }
}

/** A flag is missing or malformed, a file cannot be read: exit 2. */
export class UsageError extends CliError {
  override name = 'UsageError';
  constructor(message: string, code = 'usage_error') {
    super(code, message, ExitCode.usage);
  }
}

/** The API, a webhook verification or a local check said no: exit 1. */
export class RefusedError extends CliError {
  override name = 'RefusedError';
  constructor(code: string, message: string, options: CliErrorOptions = {}) {
    super(code, message, ExitCode.refused, options);
  }
}

/** No response: connection refused, reset, DNS, time-out: exit 3. */
export class NetworkError extends CliError {
  override name = 'NetworkError';
  constructor(code: 'connection_error' | 'timeout', message: string, options: CliErrorOptions = {}) {
    super(code, message, ExitCode.network, options);
  }
}

/** Ctrl-C during a prompt or a wait: exit 130. */
export class InterruptedError extends CliError {
  override name = 'InterruptedError';
  constructor(message = 'interrupted') {
    super('interrupted', message, ExitCode.interrupted);
  }
}

/** The SDK's error classes, passed in so this module never loads the SDK (and undici) itself. */
export interface SdkErrorClasses {
  APIError: abstract new (...args: never[]) => Error;
  ConnectionError: abstract new (...args: never[]) => Error;
  TimeoutError: abstract new (...args: never[]) => Error;
  AbortError?: abstract new (...args: never[]) => Error;
  WebhookVerificationError?: abstract new (...args: never[]) => Error;
}

interface ApiErrorLike extends Error {
  status: number;
  code: string | null;
  requestId?: string | null;
  details?: Array<{ field: string; message: string }>;
  retryAfter?: number | null;
}

interface CommanderErrorLike extends Error {
  code: string;
  exitCode: number;
}

function isCommanderError(err: unknown): err is CommanderErrorLike {
  return (
    err instanceof Error &&
    typeof (err as CommanderErrorLike).code === 'string' &&
    (err as CommanderErrorLike).code.startsWith('commander.') &&
    typeof (err as CommanderErrorLike).exitCode === 'number'
  );
}

/** True for commander's "help or version was printed" pseudo-errors, which mean success. */
export function isCommanderDisplayExit(err: unknown): boolean {
  return isCommanderError(err) && err.exitCode === 0;
}

/** Names along the prototype chain: a fallback when the SDK classes were not passed in. */
function classNames(err: Error): string[] {
  const names: string[] = [err.name];
  let proto: object | null = Object.getPrototypeOf(err);
  while (proto && proto !== Error.prototype) {
    const ctor = (proto as { constructor?: { name?: string } }).constructor;
    if (ctor?.name) names.push(ctor.name);
    proto = Object.getPrototypeOf(proto);
  }
  return names;
}

function isA(err: Error, cls: SdkErrorClasses[keyof SdkErrorClasses] | undefined, name: string): boolean {
  if (cls && err instanceof cls) return true;
  return classNames(err).includes(name);
}

const NETWORK_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/** Turn anything thrown into a CliError. The exit-code policy lives here and nowhere else. */
export function toCliError(err: unknown, sdk?: SdkErrorClasses): CliError {
  if (err instanceof CliError) return err;

  if (isCommanderError(err)) {
    // A group run without a subcommand: commander printed the group's help on stderr.
    if (err.code === 'commander.help') return new UsageError('missing command: see the list above', 'missing_command');
    // commander prefixes its messages with "error: "; the prefix is added back when printing.
    return new UsageError(err.message.replace(/^error:\s*/, ''));
  }

  if (err instanceof Error) {
    // @inquirer/prompts: Ctrl-C (ExitPromptError) or an aborted prompt.
    if (err.name === 'ExitPromptError' || err.name === 'AbortPromptError' || err.name === 'CancelPromptError') {
      return new InterruptedError();
    }
    if (isA(err, sdk?.TimeoutError, 'TimeoutError')) {
      return new NetworkError('timeout', err.message || 'request timed out', { cause: err });
    }
    if (isA(err, sdk?.ConnectionError, 'ConnectionError')) {
      return new NetworkError('connection_error', describeConnectionError(err), { cause: err });
    }
    if (isA(err, sdk?.AbortError, 'AbortError')) {
      return new InterruptedError();
    }
    if (isA(err, sdk?.WebhookVerificationError, 'WebhookVerificationError')) {
      const reason = (err as Error & { reason?: string }).reason ?? 'bad_signature';
      return new RefusedError(reason, err.message, { cause: err });
    }
    if (isA(err, sdk?.APIError, 'APIError') && typeof (err as ApiErrorLike).status === 'number') {
      const api = err as ApiErrorLike;
      return new RefusedError(api.code ?? `http_${api.status}`, api.message, {
        status: api.status,
        requestId: api.requestId ?? null,
        details: Array.isArray(api.details) ? api.details : [],
        retryAfter: typeof api.retryAfter === 'number' ? api.retryAfter : null,
        cause: err,
      });
    }
    // The relay's configuration was refused (bad flag value, unknown key in --config FILE).
    if (err.name === 'ConfigError') return new UsageError(err.message, 'config_invalid');
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR') {
      return new UsageError(err.message);
    }
    if (code === 'EADDRINUSE') {
      return new CliError('address_in_use', err.message, ExitCode.refused);
    }
    // A server that cannot be reached (the relay's PostgreSQL at start, for one): a network failure.
    if (code !== undefined && NETWORK_ERRNO.has(code)) {
      return new NetworkError('connection_error', `cannot reach the server: ${err.message}`, { cause: err });
    }
  }

  // A bug, or an error a dependency threw: report it as refused rather than crashing with a stack.
  const message = err instanceof Error ? err.message : String(err);
  return new CliError('internal_error', message || 'unexpected error', ExitCode.refused, { cause: err });
}

function describeConnectionError(err: Error): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const detail = cause?.code ?? cause?.message;
  return detail && !err.message.includes(detail) ? `${err.message} (${detail})` : err.message || 'connection error';
}

/** `{"error":{"code","message","status"}}` (plus request_id/details/retry_after when known). */
export function errorToJson(err: CliError): { error: Record<string, unknown> } {
  const error: Record<string, unknown> = { code: err.code, message: err.message, status: err.status };
  if (err.requestId) error.request_id = err.requestId;
  if (err.details.length > 0) error.details = err.details;
  if (err.retryAfter !== null) error.retry_after = err.retryAfter;
  return { error };
}

/** `error: <message> (<code>, request <id>)`, the message's further lines, and one line per validation detail. */
export function errorToHuman(err: CliError): string {
  const extra = [err.code, err.requestId ? `request ${err.requestId}` : null].filter(Boolean).join(', ');
  // The code goes after the first line: later lines of a message are advice (a command to run).
  const [first, ...rest] = err.message.split('\n');
  const lines = [`error: ${first} (${extra})`, ...rest];
  for (const d of err.details) lines.push(`  ${d.field}: ${d.message}`);
  if (err.retryAfter !== null && !/\d/.test(err.message)) lines.push(`  retry after ${err.retryAfter} s`);
  return lines.join('\n');
}
