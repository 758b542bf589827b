// A pool of worker threads for pure work: CPU-heavy tasks without side effects (compose and sign a
// message, parse a captured one) run here so the relay's event loop keeps answering HTTP and SMTP
// while the machine's other cores do them. It knows nothing of the tasks: a thread runs the entry
// file it is given (thread.ts serves the relay's task table, tasks.ts).
//
// Failure path: a task that throws rejects with TaskError and its thread carries on. A thread that
// dies (a crash, an exit, out of memory) rejects the tasks it held with ThreadsUnavailableError and
// is replaced by the next call; after MAX_CRASHES_IN_A_ROW deaths with no task answered in between
// the pool stops starting threads and refuses at once. Callers treat ThreadsUnavailableError as
// "do it yourself" (work.ts runs the task on the main thread), so a broken pool costs speed, never
// a message: nothing a thread does is a commit, and no caller acknowledges anything before its own
// commit on the main thread.
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

/** The task table a thread serves: each task takes one structured-clonable input. */
export type TaskTable = Record<string, (input: never) => unknown>;

export type TaskInput<T extends TaskTable, K extends keyof T> = Parameters<T[K]>[0];
export type TaskOutput<T extends TaskTable, K extends keyof T> = Awaited<ReturnType<T[K]>>;

/** What the pool posts to a thread, and what comes back. */
export interface TaskRequest {
  id: number;
  task: string;
  input: unknown;
}
export type TaskAnswer = { id: number; output: unknown } | { id: number; error: string };

/** The task ran and threw: the same input would throw on the main thread too. */
export class TaskError extends Error {
  constructor(task: string, message: string) {
    super(`${task}: ${message}`);
    this.name = 'TaskError';
  }
}

/** No thread could run the task (it died with the task in hand, or the pool gave up): run it yourself. */
export class ThreadsUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ThreadsUnavailableError';
  }
}

const MAX_CRASHES_IN_A_ROW = 3;

/**
 * One thread per core, at most four. Not one fewer for the main thread: at a few hundred emails a
 * second the threads' share (RSA signatures, composition, parsing) is larger than the main
 * thread's, so on two cores one thread would be the bottleneck while the main thread waits.
 */
export function defaultPoolSize(): number {
  return Math.max(1, Math.min(4, availableParallelism()));
}

interface Pending {
  task: string;
  resolve(output: unknown): void;
  reject(error: Error): void;
}

/** What booted() posts: any answer, even "no task named", shows the thread has loaded its entry. */
const BOOT_PROBE = '';

interface Thread {
  worker: Worker;
  pending: Map<number, Pending>;
  dead: boolean;
  /** Settled once the thread has answered a message, or died (booted()). */
  booted?: Promise<void>;
  answeredAny: boolean;
}

export interface PoolStats {
  /** Threads the pool keeps at most. */
  size: number;
  /** Threads alive now. */
  threads: number;
  /** Threads started since the pool was made (more than `size` after crashes). */
  started: number;
  /** Threads that died with work in hand or not. */
  crashes: number;
  /** Tasks answered by a thread, per task. */
  answered: Record<string, number>;
  /** True once the pool has given up starting threads. */
  broken: boolean;
}

export class ThreadPool<T extends TaskTable> {
  private readonly threads: Thread[] = [];
  private ids = 0;
  private started = 0;
  private crashes = 0;
  private crashesInARow = 0;
  private readonly answered: Record<string, number> = {};

  /**
   * @param entry the thread's entry file: compiled JavaScript, or TypeScript under tsx (tests and
   *   the bench), where the thread registers tsx's loader before importing it.
   */
  constructor(
    private entry: string,
    private readonly size = defaultPoolSize(),
  ) {}

  /** The file its threads run: another pool may serve the same task table. */
  get entryFile(): string {
    return this.entry;
  }

  /** The node flags its threads start with; undefined: the process's own (node's default). */
  private execArgv?: string[];

  /**
   * Threads started from now on run this file instead: the same sources, compiled (the tests),
   * without the process's flags: a thread would otherwise load the --import loaders (tsx) too.
   */
  runFrom(entry: string): void {
    this.entry = entry;
    this.execArgv = [];
  }

  /** Runs the task on the least busy thread. */
  run<K extends keyof T & string>(task: K, input: TaskInput<T, K>): Promise<TaskOutput<T, K>> {
    const thread = this.pick();
    if (!thread) return Promise.reject(new ThreadsUnavailableError(`the worker threads are gone (${this.crashes} crashed)`));
    return this.post(thread, task, input) as Promise<TaskOutput<T, K>>;
  }

  private post(thread: Thread, task: string, input: unknown): Promise<unknown> {
    const id = ++this.ids;
    return new Promise((resolve, reject) => {
      thread.pending.set(id, { task, resolve, reject });
      if (thread.pending.size === 1) thread.worker.ref();
      thread.worker.postMessage({ id, task, input } satisfies TaskRequest);
    });
  }

  /** Runs the task once on every thread alive now (a clean-up): settles when all have answered or died. */
  async each<K extends keyof T & string>(task: K, input: TaskInput<T, K>): Promise<void> {
    await Promise.allSettled(this.threads.map((thread) => this.post(thread, task, input)));
  }

  /**
   * Starts one thread now if none is up, so a task to come does not wait for one to boot. The relay
   * does not: its first task starts one, the others start when every thread has work in hand
   * (pick()); a thread costs half a CPU second to load its modules, and a relay whose tasks come
   * one at a time (a developer's, a test's) never needs a second.
   */
  warm(): void {
    if (this.threads.length === 0 && !this.broken()) this.threads.push(this.start());
  }

  /**
   * Settles once every thread started so far has loaded its entry file (or died): a thread's
   * first task waits for that, which takes seconds on a loaded machine (tests time what comes
   * after it). Starts no thread; a thread already up costs nothing.
   */
  async booted(): Promise<void> {
    await Promise.all(
      this.threads
        .filter((thread) => !thread.answeredAny && !thread.dead)
        .map((thread) => (thread.booted ??= this.post(thread, BOOT_PROBE, undefined).then(
          () => undefined,
          () => undefined,
        ))),
    );
  }

  stats(): PoolStats {
    return {
      size: this.size,
      threads: this.threads.length,
      started: this.started,
      crashes: this.crashes,
      answered: { ...this.answered },
      broken: this.broken(),
    };
  }

  /** Ends every thread; what they held is refused once they have stopped (callers run it themselves). The next task starts one again. */
  async close(): Promise<void> {
    const ending = this.threads.splice(0);
    // Refused only once stopped: a caller that reads how far its task got (shared memory) then
    // knows the thread will not go further.
    for (const thread of ending) thread.dead = true;
    await Promise.all(ending.map((t) => t.worker.terminate()));
    for (const thread of ending) this.forget(thread, new ThreadsUnavailableError('the worker threads were closed'));
  }

  private broken(): boolean {
    return this.crashesInARow >= MAX_CRASHES_IN_A_ROW;
  }

  private pick(): Thread | undefined {
    if (this.broken()) return undefined;
    // A new thread while the pool is below its size and every thread has work in hand.
    if (this.threads.length < this.size && this.threads.every((t) => t.pending.size > 0)) this.threads.push(this.start());
    let best: Thread | undefined;
    for (const t of this.threads) if (!best || t.pending.size < best.pending.size) best = t;
    return best;
  }

  /** A thread that is gone: what it held is refused. */
  private forget(thread: Thread, error: ThreadsUnavailableError): void {
    thread.dead = true;
    for (const pending of thread.pending.values()) pending.reject(error);
    thread.pending.clear();
  }

  private start(): Thread {
    this.started++;
    const worker = this.entry.endsWith('.ts')
      ? // Resolved here, from this file, so the thread finds tsx whatever its working directory.
        new Worker(
          `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(pathToFileURL(this.entry).href)}); });`,
          { eval: true },
        )
      : new Worker(this.entry, { execArgv: this.execArgv });
    const thread: Thread = { worker, pending: new Map(), dead: false, answeredAny: false };
    worker.on('message', (answer: TaskAnswer) => {
      const pending = thread.pending.get(answer.id);
      if (!pending) return;
      thread.pending.delete(answer.id);
      thread.answeredAny = true;
      if (thread.pending.size === 0) worker.unref();
      // The probe is no task: its answer neither counts as one nor ends a run of crashes.
      if (pending.task === BOOT_PROBE) return pending.resolve(undefined);
      this.crashesInARow = 0;
      if ('error' in answer) return pending.reject(new TaskError(pending.task, answer.error));
      this.answered[pending.task] = (this.answered[pending.task] ?? 0) + 1;
      pending.resolve(answer.output);
    });
    const die = (why: string) => {
      if (thread.dead) return;
      this.crashes++;
      this.crashesInARow++;
      this.threads.splice(this.threads.indexOf(thread), 1);
      this.forget(thread, new ThreadsUnavailableError(`a worker thread ${why}`));
    };
    worker.on('error', (error) => die(`failed: ${error.message}`));
    worker.on('exit', (code) => die(`exited (${code})`));
    // An idle thread must not keep the process alive; one with work in hand does (see run()).
    // After the listeners: adding a 'message' listener refs the thread again.
    worker.unref();
    return thread;
  }
}

/** Bytes that crossed a thread arrive as a plain Uint8Array: a Buffer over the same memory. */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
