import { LOG_LEVELS, type LogLevel, type Logger } from './options.js';

const RANK: Record<LogLevel, number> = { off: 0, error: 1, warn: 2, info: 3, debug: 4 };

/** Default sink: one JSON line per entry on stderr (stdout belongs to the program using the SDK). */
const stderrLogger: Logger = {
  error: (msg, data) => writeLine('error', msg, data),
  warn: (msg, data) => writeLine('warn', msg, data),
  info: (msg, data) => writeLine('info', msg, data),
  debug: (msg, data) => writeLine('debug', msg, data),
};

function writeLine(level: LogLevel, msg: string, data?: Record<string, unknown>): void {
  process.stderr.write(
    JSON.stringify({ t: new Date().toISOString(), level, component: 'raven-sdk', msg, ...data }) + '\n',
  );
}

export function parseLogLevel(value: string | undefined): LogLevel | undefined {
  const v = value?.trim().toLowerCase();
  return v && (LOG_LEVELS as readonly string[]).includes(v) ? (v as LogLevel) : undefined;
}

/** A logger that drops everything below `level`; with `'off'` nothing is ever called. */
export function levelledLogger(level: LogLevel, sink: Logger = stderrLogger): Logger {
  const rank = RANK[level];
  const noop = () => {};
  return {
    error: rank >= RANK.error ? (m, d) => sink.error(m, d) : noop,
    warn: rank >= RANK.warn ? (m, d) => sink.warn(m, d) : noop,
    info: rank >= RANK.info ? (m, d) => sink.info(m, d) : noop,
    debug: rank >= RANK.debug ? (m, d) => sink.debug(m, d) : noop,
  };
}

const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie']);

/** Headers safe to log: credentials replaced by "[redacted]". */
export function redactHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    out[name] = SECRET_HEADERS.has(name.toLowerCase()) ? '[redacted]' : value;
  }
  return out;
}
