// DKIM signing on worker threads (relay/delivery/dkim-pool.ts): the same bytes as signing on the
// main thread, for many messages in flight at once; a pool whose thread died refuses, so the
// caller signs inline.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { test } from 'node:test';
import { DkimPool } from '../../relay/delivery/dkim-pool.js';
import { signMessage } from '../../relay/delivery/dkim-worker.js';

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const message = (n: number) =>
  Buffer.from(`From: Shop <shop@example.test>\r\nTo: user${n}@example.test\r\nSubject: Receipt ${n}\r\n\r\nThanks for order ${n}.\r\n`);

test('the pool signs as the main thread would, many messages at once', async () => {
  const pool = new DkimPool(2);
  const jobs = Array.from({ length: 50 }, (_, n) => ({ raw: message(n), domainName: 'example.test', keySelector: 'raven', privateKey }));
  const signed = await Promise.all(jobs.map((job) => pool.sign(job)));
  for (const [n, job] of jobs.entries()) {
    assert.match(signed[n]!.toString('latin1'), /^DKIM-Signature: v=1; a=rsa-sha256; c=relaxed\/relaxed; d=example.test;/);
    assert.ok(signed[n]!.equals(await signMessage(job)), `message ${n}: same bytes as inline`);
  }
});

test('a pool whose thread is gone refuses at once instead of hanging', async () => {
  const pool = new DkimPool(1);
  const job = { raw: message(1), domainName: 'example.test', keySelector: 'raven', privateKey };
  await pool.sign(job);
  // The only thread exits: what it had and what comes later is refused (dkim.ts then signs inline).
  await (pool as unknown as { threads: Array<{ worker: { terminate(): Promise<number> } }> }).threads[0]!.worker.terminate();
  await assert.rejects(pool.sign(job), /DKIM signing thread/);
});
