// What a worker thread's delivery logged (delivery/thread-delivery.ts): the lines come back with its
// answer and the main thread writes them with its own logger. A module of its own so the main
// thread's worker reads them without loading the thread's delivery code (the MIME composer).
import type { Component, Logger, LogLevel } from '../log.js';

export interface LogLine {
  level: Exclude<LogLevel, 'silent'>;
  component: Component;
  msg: string;
  fields?: Record<string, unknown>;
}

/** Writes a thread's log lines with the relay's logger. */
export function replayLogs(log: Logger, lines: readonly LogLine[]): void {
  for (const line of lines) log[line.level](line.component, line.msg, line.fields);
}
