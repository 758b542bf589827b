// A worker thread of the relay's pool (pool.ts, work.ts): runs the tasks of tasks.ts one message
// at a time as they come, and answers each with its output or its error.
import { parentPort } from 'node:worker_threads';
import type { TaskAnswer, TaskRequest } from './pool.js';
import { tasks } from './tasks.js';

const port = parentPort;
if (!port) throw new Error('relay/threads/thread.ts runs only as a worker thread');

port.on('message', (request: TaskRequest) => {
  const run = tasks[request.task as keyof typeof tasks] as ((input: unknown) => unknown) | undefined;
  Promise.resolve()
    .then(() => {
      if (!run) throw new Error(`no task named ${request.task}`);
      return run(request.input);
    })
    .then(
      (output) => port.postMessage({ id: request.id, output } satisfies TaskAnswer),
      (error: unknown) => port.postMessage({ id: request.id, error: (error as Error)?.message ?? String(error) } satisfies TaskAnswer),
    );
});
