// The relay's worker threads, one pool for every relay in this process (the tests start many):
// what the main thread hands off (tasks.ts), and the main thread's fallback when no thread can.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../log.js';
import { ThreadPool, ThreadsUnavailableError, type TaskInput, type TaskOutput, type TaskTable } from './pool.js';
import type { RelayTasks } from './tasks.js';

// The thread runs the same kind of file as this one: compiled JavaScript, or TypeScript under tsx.
const here = fileURLToPath(import.meta.url);
export const workerThreads = new ThreadPool<RelayTasks>(path.join(path.dirname(here), `thread${path.extname(here)}`));

export type Offload<T extends TaskTable> = <K extends keyof T & string>(log: Logger, task: K, input: TaskInput<T, K>) => Promise<TaskOutput<T, K>>;

/**
 * Runs a task on the pool's threads, or on this one when no thread can (one died with it in hand,
 * or the pool gave up): slower, never lost. A task that throws throws here too.
 */
export function offloadTo<T extends TaskTable>(pool: ThreadPool<T>, loadTable: () => Promise<T>): Offload<T> {
  let warned = false;
  return async <K extends keyof T & string>(log: Logger, task: K, input: TaskInput<T, K>): Promise<TaskOutput<T, K>> => {
    try {
      return await pool.run(task, input);
    } catch (error) {
      if (!(error instanceof ThreadsUnavailableError)) throw error;
      if (!warned) log.warn('threads', 'a worker thread failed; running its work on the main thread', { task, error: error.message });
      warned = true;
      const table = await loadTable();
      return (await (table[task] as (input: TaskInput<T, K>) => unknown)(input)) as TaskOutput<T, K>;
    }
  };
}

// The task table's modules (the MIME composer and parser) load on this thread only if it ever has
// to do a task itself: the threads load them, the main thread has no other use for them.
const relayTasks = async (): Promise<RelayTasks> => (await import('./tasks.js')).tasks;

export const offload: Offload<RelayTasks> = offloadTo(workerThreads, relayTasks);

/**
 * The checks of captured mail (relay/inbox/checks/) run on a thread of their own: the sink parses
 * every capture on workerThreads before its 250, and a check (a hundred milliseconds of caniemail's
 * data on a large template) must never queue ahead of it.
 */
export const checksThread = new ThreadPool<RelayTasks>(workerThreads.entryFile, 1);
export const offloadCheck: Offload<RelayTasks> = offloadTo(checksThread, relayTasks);

/**
 * Threads started from now on run `entry`, a compiled copy of these sources: the tests run the
 * relay under tsx, where each thread would load tsx's loader and compile its whole module graph
 * again (about 1.5 CPU seconds a thread), in every test process.
 */
export function loadThreadsFrom(entry: string): void {
  workerThreads.runFrom(entry);
  checksThread.runFrom(entry);
}
