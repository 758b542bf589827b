// Structured log lines on stderr: {"t","level","component","msg",...}. Callers never pass keys,
// secrets or message bodies; `redact` exists for the few places a header could carry one.
export type LogLevel = 'silent' | 'error' | 'warn' | 'info' | 'debug';
export type Component = 'relay' | 'http' | 'smtp' | 'submission' | 'queue' | 'webhook' | 'db' | 'listen' | 'dns' | 'inbox' | 'threads';

const ORDER: Record<LogLevel, number> = { silent: 0, error: 1, warn: 2, info: 3, debug: 4 };

export interface Logger {
  error(component: Component, msg: string, fields?: Record<string, unknown>): void;
  warn(component: Component, msg: string, fields?: Record<string, unknown>): void;
  info(component: Component, msg: string, fields?: Record<string, unknown>): void;
  debug(component: Component, msg: string, fields?: Record<string, unknown>): void;
}

export function createLogger(level: LogLevel, write: (line: string) => void = (l) => process.stderr.write(l)): Logger {
  const emit = (at: Exclude<LogLevel, 'silent'>) => (component: Component, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[at] > ORDER[level]) return;
    write(`${JSON.stringify({ t: new Date().toISOString(), level: at, component, msg, ...fields })}\n`);
  };
  return { error: emit('error'), warn: emit('warn'), info: emit('info'), debug: emit('debug') };
}

export function redact(secret: string): string {
  return secret.length <= 12 ? '…' : `${secret.slice(0, 8)}…${secret.slice(-4)}`;
}
