// The worker-thread pool (relay/threads/): the relay's tasks run on threads and give what the main
// thread would; a thread that dies refuses the work it held (the caller runs it itself) and is
// replaced, and offloaded work it held runs on the main thread; a pool whose threads keep dying
// gives up and refuses at once.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { threadId } from 'node:worker_threads';
import { test } from 'node:test';
import { signedOutboundMessage } from '../../relay/delivery/outbound.js';
import { parseMessage, summarize } from '../../relay/inbox/read-message.js';
import { TaskError, ThreadPool, ThreadsUnavailableError, asBuffer } from '../../relay/threads/pool.js';
import type { RelayTasks } from '../../relay/threads/tasks.js';
import { offloadTo } from '../../relay/threads/work.js';
import type { Logger } from '../../relay/log.js';
import type { crashingTasks } from '../helpers/crashing-thread.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const RELAY_THREAD = path.join(here, '../../relay/threads/thread.ts');
const CRASHING_THREAD = path.join(here, '../helpers/crashing-thread.ts');

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const email = (n: number) => ({
  id: `em_${String(n).padStart(26, '0')}`,
  from_address: 'Shop <shop@example.test>',
  to_json: JSON.stringify([`user${n}@example.test`]),
  cc_json: '[]',
  reply_to: null,
  subject: `Receipt ${n}`,
  text_body: `Thanks for order ${n}.`,
  html_body: null,
  headers_json: '{}',
});
const captured = (n: number) =>
  Buffer.from(`From: Shop <shop@example.test>\r\nTo: User <user${n}@example.test>\r\nSubject: Code ${n}\r\nContent-Type: text/plain\r\n\r\nYour code is ${n}.\r\n`);

test('the relay\'s tasks run on the threads and give what the main thread gives, many at once', async () => {
  const pool = new ThreadPool<RelayTasks>(RELAY_THREAD, 2);
  try {
    const date = new Date('2026-01-02T03:04:05Z');
    const jobs = Array.from({ length: 40 }, (_, n) => ({
      email: email(n),
      recipients: [{ address: `user${n}@example.test`, position: 0 }],
      date,
      dkim: { domainName: 'example.test', keySelector: 'raven', privateKey },
    }));
    const built = await Promise.all(jobs.map((job) => pool.run('outboundMessage', job)));
    for (const [n, job] of jobs.entries()) {
      const inline = await signedOutboundMessage(job);
      const raw = asBuffer(built[n]!.raw);
      assert.match(raw.toString('latin1'), /^DKIM-Signature: v=1; a=rsa-sha256; c=relaxed\/relaxed; d=example.test;/);
      assert.ok(raw.equals(inline.raw), `message ${n}: the same bytes as inline`);
      assert.deepEqual({ ...built[n], raw: undefined }, { ...inline, raw: undefined });
    }
    const envelope = { from: 'bounce@example.test', to: ['user1@example.test'] };
    const summaries = await Promise.all([1, 2, 3].map((n) => pool.run('inboxSummary', { raw: captured(n), envelope })));
    for (const [i, summary] of summaries.entries()) assert.deepEqual(summary, summarize(await parseMessage(captured(i + 1)), envelope));
    // Counted as the threads' answers come back: none of this ran on the test's own thread.
    const stats = pool.stats();
    assert.deepEqual(stats.answered, { outboundMessage: 40, inboxSummary: 3 });
    assert.equal(stats.crashes, 0);
    assert.ok(stats.started >= 1 && stats.started <= 2, `started ${stats.started}`);
  } finally {
    await pool.close();
  }
});

test('a task that throws rejects with its error; its thread carries on', async () => {
  const pool = new ThreadPool<typeof crashingTasks>(CRASHING_THREAD, 1);
  try {
    await assert.rejects(pool.run('fail', {}), (error: Error) => error instanceof TaskError && /always fails/.test(error.message));
    const answer = await pool.run('echo', { n: 1 });
    assert.equal(answer.n, 1);
    assert.notEqual(answer.threadId, threadId, 'answered by a worker thread');
    assert.equal(pool.stats().crashes, 0);
  } finally {
    await pool.close();
  }
});

test('a thread that dies refuses what it held, and the next task gets a new thread', async () => {
  const pool = new ThreadPool<typeof crashingTasks>(CRASHING_THREAD, 1);
  try {
    const first = await pool.run('echo', { n: 1 });
    // One thread: the crash and the two tasks behind it are in its hands together.
    const held = [pool.run('crash', {}), pool.run('echo', { n: 2 }), pool.run('echo', { n: 3 })];
    for (const outcome of await Promise.allSettled(held)) {
      assert.equal(outcome.status, 'rejected');
      assert.ok((outcome as PromiseRejectedResult).reason instanceof ThreadsUnavailableError);
    }
    const after = await pool.run('echo', { n: 4 });
    assert.equal(after.n, 4);
    assert.notEqual(after.threadId, first.threadId, 'a new thread');
    const stats = pool.stats();
    assert.equal(stats.crashes, 1);
    assert.equal(stats.started, 2);
    assert.equal(stats.broken, false);
  } finally {
    await pool.close();
  }
});

test('threads that die again and again: the pool gives up and refuses at once', async () => {
  const pool = new ThreadPool<typeof crashingTasks>(CRASHING_THREAD, 1);
  try {
    for (let i = 0; i < 3; i++) await assert.rejects(pool.run('crash', {}), ThreadsUnavailableError);
    assert.equal(pool.stats().broken, true);
    await assert.rejects(pool.run('echo', { n: 1 }), ThreadsUnavailableError);
    assert.equal(pool.stats().started, 3, 'no thread started once broken');
  } finally {
    await pool.close();
  }
});

test('offloaded work a dying thread held is done on the main thread instead, never lost', async () => {
  const pool = new ThreadPool<typeof crashingTasks>(CRASHING_THREAD, 1);
  const { crashingTasks: table } = await import('../helpers/crashing-thread.js');
  const warnings: string[] = [];
  const log = { error() {}, info() {}, debug() {}, warn: (_c: string, msg: string) => void warnings.push(msg) } as unknown as Logger;
  const offload = offloadTo(pool, async () => table);
  try {
    // One thread: the echo waits behind the crash, in the same thread's hands.
    const crashed = pool.run('crash', {});
    const echoed = offload(log, 'echo', { n: 5 });
    await assert.rejects(crashed, ThreadsUnavailableError);
    const answer = await echoed;
    assert.equal(answer.n, 5);
    assert.equal(answer.threadId, threadId, 'answered on the main thread');
    assert.equal(warnings.length, 1);
    // A task that throws is not retried here: it throws.
    await assert.rejects(offload(log, 'fail', {}), TaskError);
  } finally {
    await pool.close();
  }
});

test('booted() settles once the threads started have loaded, and counts as no task: a run of crashes still ends the pool', async () => {
  const pool = new ThreadPool<typeof crashingTasks>(CRASHING_THREAD, 1);
  try {
    await pool.booted(); // no thread yet: nothing to wait for, none started
    assert.equal(pool.stats().started, 0);
    pool.warm();
    await pool.booted();
    assert.deepEqual(pool.stats().answered, {}, 'the probe is no task');
    // Crashes with a probe answered between them are still a run: the pool gives up after three.
    for (let i = 0; i < 3; i++) {
      await assert.rejects(pool.run('crash', {}), ThreadsUnavailableError);
      pool.warm();
      await pool.booted();
    }
    assert.equal(pool.stats().broken, true);
  } finally {
    await pool.close();
  }
});
