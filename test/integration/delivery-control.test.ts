// Retry now and pause/resume (issue 25): a delayed recipient is tried again at once; any other
// email is 409 with why; delivery_unknown is resent only with {"confirm_unknown": true}; a paused
// project's mail is admitted and waits until it is resumed.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js';
import { createProjectWithKey, call, startTestRelay, type TestRelay } from '../helpers/start-relay.js';

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 600; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function recipientStatus(t: TestRelay, id: string, status: string): Promise<void> {
  await until(`${id} to be ${status}`, async () => {
    const res = await t.api('GET', `/v1/emails/${id}`);
    return res.body.recipients?.[0]?.status === status ? true : undefined;
  });
}

describe('retry now, through an upstream that defers, then drops after DATA, then accepts', () => {
  let upstream: FakeUpstream;
  let t: TestRelay;
  const seen = new Set<string>();

  before(async () => {
    upstream = await startFakeUpstream({
      onRcpt(address) {
        if (address.startsWith('later@') && !seen.has(address)) {
          seen.add(address);
          return { code: 451, message: '4.7.1 greylisted' };
        }
        return undefined;
      },
      onData(message) {
        const to = message.to[0]!;
        if (to.startsWith('unknown@') && !seen.has(to)) {
          seen.add(to);
          return 'drop';
        }
        return 'accept';
      },
    });
    // The test clock stands still: only retry now can bring the delayed recipient's next attempt.
    t = await startTestRelay({ flags: { upstream: upstream.url, testClock: true } });
  });
  after(async () => {
    await t.stop();
    await upstream.close();
  });

  test('a delayed recipient is tried again at once; then the email is 409 with why', async () => {
    const sent = await t.send({ to: [`later@${t.domain}`] });
    await recipientStatus(t, sent.body.id, 'delivery_delayed');
    const retried = await t.admin('POST', `/admin/v1/emails/${sent.body.id}/retry`, {});
    assert.equal(retried.status, 200, retried.text);
    assert.deepEqual(retried.body, { id: sent.body.id, recipients: [`later@${t.domain}`] });
    await recipientStatus(t, sent.body.id, 'sent');

    const again = await t.admin('POST', `/admin/v1/emails/${sent.body.id}/retry`, {});
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'conflict');
    assert.match(again.body.error.message, /delivery_delayed/);
  });

  test('delivery_unknown: 409 saying why, resent only with confirm_unknown', async () => {
    const sent = await t.send({ to: [`unknown@${t.domain}`] });
    await recipientStatus(t, sent.body.id, 'delivery_unknown');
    const refused = await t.admin('POST', `/admin/v1/emails/${sent.body.id}/retry`);
    assert.equal(refused.status, 409);
    assert.equal(refused.body.error.code, 'conflict');
    assert.match(refused.body.error.message, /may already have accepted.*confirm_unknown/);
    const confirmed = await t.admin('POST', `/admin/v1/emails/${sent.body.id}/retry`, { confirm_unknown: true });
    assert.equal(confirmed.status, 200, confirmed.text);
    await recipientStatus(t, sent.body.id, 'sent');
    assert.equal(upstream.received.filter((m) => m.to.includes(`unknown@${t.domain}`)).length, 1);
  });

  test('bad input: unknown email 404, a non-boolean confirm_unknown 422', async () => {
    assert.equal((await t.admin('POST', '/admin/v1/emails/em_unknown/retry', {})).status, 404);
    const sent = await t.send();
    const bad = await t.admin('POST', `/admin/v1/emails/${sent.body.id}/retry`, { confirm_unknown: 'yes' });
    assert.equal(bad.status, 422);
    assert.equal(bad.body.error.code, 'validation_error');
  });
});

describe('pause and resume delivery per project', () => {
  let t: TestRelay;
  before(async () => {
    t = await startTestRelay();
  });
  after(async () => {
    await t.stop();
  });

  test("a paused project's mail is admitted and waits while another project's is delivered; resume delivers it", async () => {
    const paused = await t.admin('POST', `/admin/v1/projects/${t.projectId}/delivery/pause`);
    assert.equal(paused.status, 200, paused.text);
    assert.equal(paused.body.delivery_paused, true);
    assert.equal((await t.admin('GET', `/admin/v1/projects/${t.projectId}/delivery`)).body.delivery_paused, true);

    const waiting = await t.send({ subject: 'waits while paused' });
    assert.equal(waiting.status, 202, waiting.text);
    // Another project's email, admitted after it, is delivered: the worker ran past the paused one.
    const other = await createProjectWithKey(t);
    const passing = await call(t.url, 'POST', '/v1/emails', {
      token: other.key,
      body: { from: `a@${other.domain}`, to: `b@${other.domain}`, subject: 'not paused', text: 'x' },
    });
    assert.equal(passing.status, 202, passing.text);
    await until('the other project to be delivered', async () => {
      const res = await call(t.url, 'GET', `/v1/emails/${passing.body.id}`, { token: other.key });
      return res.body.status === 'delivered' ? true : undefined;
    });
    assert.equal((await t.api('GET', `/v1/emails/${waiting.body.id}`)).body.status, 'queued');

    const resumed = await t.admin('POST', `/admin/v1/projects/${t.projectId}/delivery/resume`);
    assert.equal(resumed.status, 200);
    assert.deepEqual(resumed.body, { id: t.projectId, delivery_paused: false, paused_at: null });
    const final = await t.waitForFinal(waiting.body.id);
    assert.equal(final.status, 'delivered');
  });

  test('an unknown project: 404', async () => {
    assert.equal((await t.admin('POST', '/admin/v1/projects/prj_unknown/delivery/pause')).status, 404);
  });
});
