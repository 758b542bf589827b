// DKIM signing off the event loop: at a few hundred messages a second the synchronous RSA sign and
// the body hash were about a tenth of the relay's main thread (BENCHMARKS.md), which also runs
// admission and both ends of the sink's SMTP sessions. One signing thread per spare CPU (at most
// two) takes the messages in turn. A thread that fails leaves its messages to be signed inline,
// so a broken pool slows delivery down but never stops it.
import type { KeyObject } from 'node:crypto';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { SignAnswer, SignRequest } from './dkim-worker.js';

export interface SignJob {
  raw: Buffer;
  domainName: string;
  keySelector: string;
  privateKey: KeyObject;
}

interface Pending {
  resolve(signed: Buffer): void;
  reject(error: Error): void;
}

interface Thread {
  worker: Worker;
  pending: Map<number, Pending>;
}

// The thread runs the same kind of file as this one: compiled JavaScript, or TypeScript under tsx.
const here = fileURLToPath(import.meta.url);
const WORKER_FILE = path.join(path.dirname(here), `dkim-worker${path.extname(here)}`);

export class DkimPool {
  private threads: Thread[] = [];
  private next = 0;
  private ids = 0;
  private broken = false;

  constructor(private readonly size = Math.max(1, Math.min(2, availableParallelism() - 1))) {}

  /** The signed message, or a rejection when the pool cannot sign (the caller signs inline). */
  sign(job: SignJob): Promise<Buffer> {
    if (this.broken) return Promise.reject(new Error('the DKIM signing threads are gone'));
    const thread = this.thread();
    const id = ++this.ids;
    return new Promise<Buffer>((resolve, reject) => {
      thread.pending.set(id, { resolve, reject });
      if (thread.pending.size === 1) thread.worker.ref();
      const request: SignRequest = { id, raw: job.raw, domainName: job.domainName, keySelector: job.keySelector, privateKey: job.privateKey };
      thread.worker.postMessage(request);
    });
  }

  /** Starts the threads now, so the first messages do not wait for a thread to boot. */
  warm(): void {
    if (this.broken) return;
    while (this.threads.length < this.size) this.threads.push(this.start());
  }

  private thread(): Thread {
    if (this.threads.length < this.size) this.threads.push(this.start());
    const thread = this.threads[this.next % this.threads.length]!;
    this.next++;
    return thread;
  }

  private start(): Thread {
    const worker = WORKER_FILE.endsWith('.ts')
      ? // Under tsx (tests, npm run bench) the thread registers the TypeScript loader before the file.
        // Resolved here, from this file, so the thread finds tsx whatever its working directory.
        new Worker(
          `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(pathToFileURL(WORKER_FILE).href)}); });`,
          { eval: true },
        )
      : new Worker(WORKER_FILE);
    const thread: Thread = { worker, pending: new Map() };
    worker.on('message', (answer: SignAnswer) => {
      const pending = thread.pending.get(answer.id);
      if (!pending) return;
      thread.pending.delete(answer.id);
      if (thread.pending.size === 0) worker.unref();
      if ('signed' in answer) pending.resolve(Buffer.from(answer.signed.buffer, answer.signed.byteOffset, answer.signed.byteLength));
      else pending.reject(new Error(answer.error));
    });
    const fail = (error: Error) => {
      this.broken = true;
      for (const pending of thread.pending.values()) pending.reject(error);
      thread.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the DKIM signing thread exited (${code})`)));
    // An idle thread must not keep the process alive; one with work in hand does (see sign()).
    // After the listeners: adding a 'message' listener refs the thread again.
    worker.unref();
    return thread;
  }
}
