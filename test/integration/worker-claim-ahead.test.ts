// The worker claims ahead of its in-flight limit (relay/queue/worker.ts, claimAhead): a job claimed
// ahead begins as soon as a dispatch is answered, without waiting for a claim. Nothing was sent for
// such a job, so a worker that stops puts it back in the queue as it was: it is delivered after
// the restart, once, and never counted delivery_unknown.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startHarness, type Harness } from '../helpers/delivery-harness.js';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js';

let upstream: FakeUpstream;
let h: Harness;
/** While set, the upstream holds each message's answer until it is called. */
let hold: Promise<void> | undefined;
let release = (): void => {};

before(async () => {
  upstream = await startFakeUpstream({
    async onData() {
      await hold;
      return 'accept' as const;
    },
  });
  // Two in flight, so one claimed ahead (claimAhead(2)).
  h = await startHarness({ target: { host: '127.0.0.1', port: upstream.port }, concurrency: 2, worker: false });
});

after(async () => {
  release();
  await h.stop();
  await upstream.close();
});

test('jobs claimed ahead wait for a free slot, go back to the queue when the worker stops, and are delivered once after the restart', async () => {
  hold = new Promise<void>((resolve) => (release = resolve));
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push(await h.insertEmail({ to: [`user${i}@${h.domain}`] }));
  const worker = h.startWorker();

  // Two dispatches held by the upstream, one more job claimed ahead of them.
  await h.waitFor('two messages held and a third job claimed', async () => {
    const states = await Promise.all(ids.map(async (id) => (await h.job(id)).state));
    return upstream.read.length === 2 && states.filter((s) => s === 'running').length === 3;
  });
  assert.equal(upstream.read.length, 2, 'the job claimed ahead does not begin while both slots are taken');

  const stopped = worker.stop();
  release();
  await stopped;

  const jobs = await Promise.all(ids.map((id) => h.job(id)));
  assert.deepEqual(
    jobs.map((j) => j.state).sort(),
    ['done', 'done', 'ready', 'ready', 'ready'],
    'the job claimed ahead is back in the queue with the two never claimed',
  );
  for (const job of jobs.filter((j) => j.state === 'ready')) assert.equal(job.attempts, 0);

  h.startWorker();
  for (const id of ids) assert.equal((await h.waitForTerminal(id)).status, 'delivered');
  for (const id of ids) {
    const [recipient] = await h.recipients(id);
    assert.equal(recipient!.status, 'delivered');
  }
  const times = new Map<string, number>();
  for (const m of upstream.received) for (const to of m.to) times.set(to, (times.get(to) ?? 0) + 1);
  assert.deepEqual([...times.values()], [1, 1, 1, 1, 1], 'each message sent once');
});
