// The relay's worker threads in this test process (relay/threads/work.ts). Under `npm test` they run
// the run's transpiled copy of the sources (RAVEN_TEST_CHILD_BUILD, helpers/child-build.ts), not
// the sources through tsx (1.5 CPU seconds a thread). And their loading their code: a thread's
// first task waits for that, seconds under tsx on a loaded machine (3 to 13 s at load 20-27), and
// a new one starts whenever the threads were ended (delivery-thread.test.ts). A test's
// limit for a delivery leaves that time out: its wait loops add the time spent here to their
// deadline. Bounded itself: threads that never load fail the test, they do not stretch its limit.
import path from 'node:path';
import { loadThreadsFrom, workerThreads } from '../../relay/threads/work.js';

const childBuild = process.env.RAVEN_TEST_CHILD_BUILD;
if (childBuild) loadThreadsFrom(path.join(childBuild, 'relay/threads/thread.js'));

const BOOT_LIMIT_MS = 60_000;

/** Waits while any thread started so far is still loading; answers the milliseconds waited. */
export async function threadBootMs(): Promise<number> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      workerThreads.booted(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`the worker threads did not load within ${BOOT_LIMIT_MS / 1000} s`)), BOOT_LIMIT_MS);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
  return Date.now() - started;
}
