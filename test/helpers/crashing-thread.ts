// A worker-thread entry for test/unit/thread-pool.test.ts: the pool's protocol with tasks that
// echo, throw, or end the thread outright as a crash would.
import { parentPort, threadId } from 'node:worker_threads';
import type { TaskAnswer, TaskRequest } from '../../relay/threads/pool.js';

export const crashingTasks = {
  echo: (input: { n: number }) => ({ n: input.n, threadId }),
  fail: (_input: Record<string, never>): never => {
    throw new Error('this task always fails');
  },
  // Answers nothing: the thread is gone, with whatever else it held.
  crash: (_input: Record<string, never>): never => process.exit(7),
};

parentPort?.on('message', (request: TaskRequest) => {
  try {
    const output = (crashingTasks[request.task as keyof typeof crashingTasks] as (input: unknown) => unknown)(request.input);
    parentPort!.postMessage({ id: request.id, output } satisfies TaskAnswer);
  } catch (error) {
    parentPort!.postMessage({ id: request.id, error: (error as Error).message } satisfies TaskAnswer);
  }
});
