// Rate limits, monthly quotas, production activation and the test clock, over the wire.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createProjectWithKey, startTestRelay, type TestRelay } from '../helpers/start-relay.js';

describe('rate limits (specification values)', () => {
  let t: TestRelay;
  before(async () => {
    t = await startTestRelay({ limits: 'spec', flags: { testClock: true } });
  });
  after(async () => {
    await t.stop();
  });

  test('a development key is held to 15 accepted requests per minute; replays do not count', async () => {
    const results = [];
    for (let i = 0; i < 15; i++) results.push(await t.send({ subject: `n${i}` }, { idempotencyKey: `rl-${i}` }));
    assert.ok(results.every((r) => r.status === 202), JSON.stringify(results.map((r) => r.status)));

    const refused = await t.send({ subject: 'sixteenth' });
    assert.equal(refused.status, 429, refused.text);
    assert.equal(refused.body.error.code, 'rate_limit_exceeded');
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
    assert.equal(refused.body.error.retry_after, retryAfter);
    assert.match(refused.body.error.message, new RegExp(`${retryAfter} second`));

    // A replay of an admitted request is answered even while the window is full.
    const replay = await t.send({ subject: 'n3' }, { idempotencyKey: 'rl-3' });
    assert.equal(replay.status, 202);
    assert.equal(replay.body.id, results[3]!.body.id);

    const advanced = await t.admin('POST', '/admin/v1/clock/advance', { seconds: 61 });
    assert.equal(advanced.status, 200, advanced.text);
    const again = await t.send({ subject: 'after a minute' });
    assert.equal(again.status, 202, again.text);
  });

  test('refused requests do not count toward the window', async () => {
    await t.admin('POST', '/admin/v1/clock/advance', { seconds: 61 });
    for (let i = 0; i < 5; i++) assert.equal((await t.send({ from: 'x@unverified.test' })).status, 422);
    for (let i = 0; i < 15; i++) assert.equal((await t.send({ subject: `w${i}` })).status, 202);
    assert.equal((await t.send({})).status, 429);
  });
});

describe('monthly quotas', () => {
  let t: TestRelay;
  before(async () => {
    t = await startTestRelay({
      flags: { testClock: true },
      overrides: (c) => {
        c.limits.testKeyMonthlyRecipients = 10;
        c.limits.workspaceMonthlyRecipients = 25;
      },
    });
  });
  after(async () => {
    await t.stop();
  });

  test('concurrent requests cannot overshoot a cap; the refusal names the reset; the month change resets it', async () => {
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => t.send({ subject: `q${i}` })));
    const accepted = results.filter((r) => r.status === 202);
    const refused = results.filter((r) => r.status === 429);
    assert.equal(accepted.length, 10, JSON.stringify(results.map((r) => r.status)));
    assert.equal(refused.length, 10);
    const error = refused[0]!.body.error;
    assert.equal(error.code, 'quota_exceeded');
    const retryAfter = Number(refused[0]!.headers.get('retry-after'));
    assert.equal(error.retry_after, retryAfter);
    const clock = await t.admin('GET', '/admin/v1/clock');
    const resetAt = new Date(Date.UTC(new Date(clock.body.now).getUTCFullYear(), new Date(clock.body.now).getUTCMonth() + 1, 1));
    assert.ok(error.message.includes(resetAt.toISOString()), error.message);
    assert.ok(Math.abs(clock.body.unix + retryAfter - resetAt.getTime() / 1000) <= 2);

    const usage = await t.admin('GET', `/admin/v1/workspaces/${t.workspaceId}/usage`);
    assert.equal(usage.status, 200);
    assert.equal(usage.body.workspace.used, 10);
    assert.equal(usage.body.workspace.limit, 25);
    const keyUsage = usage.body.keys.find((k: any) => k.used === 10);
    assert.ok(keyUsage, JSON.stringify(usage.body));
    assert.equal(keyUsage.limit, 10);

    // A request with more recipients than remain is refused whole.
    const other = await createProjectWithKey(t);
    const big = await t.api('POST', '/v1/emails', {
      key: other.key,
      body: { from: `a@${other.domain}`, to: Array.from({ length: 16 }, (_, i) => `r${i}@${other.domain}`), subject: 's', text: 't' },
    });
    assert.equal(big.status, 429, big.text);
    assert.equal(big.body.error.code, 'quota_exceeded');

    const moved = await t.admin('POST', '/admin/v1/clock/advance', { seconds: retryAfter });
    assert.equal(moved.status, 200);
    const next = await t.send({ subject: 'new month' });
    assert.equal(next.status, 202, next.text);
    const newUsage = await t.admin('GET', `/admin/v1/workspaces/${t.workspaceId}/usage`);
    assert.equal(newUsage.body.workspace.used, 1);
    assert.notEqual(newUsage.body.month, usage.body.month);
  });
});

describe('production keys', () => {
  let t: TestRelay;
  before(async () => {
    t = await startTestRelay();
  });
  after(async () => {
    await t.stop();
  });

  test('rr_live_ keys get 403 production_not_enabled until the workspace is activated', async () => {
    const ws = await t.admin('POST', '/admin/v1/workspaces', { name: 'Acme' });
    assert.equal(ws.status, 201);
    assert.equal(ws.body.activated, false);
    const live = await createProjectWithKey(t, { workspaceId: ws.body.id, environment: 'production' });
    assert.match(live.key, /^rr_live_/);
    const body = { from: `a@${live.domain}`, to: 'someone@gmail.com', subject: 's', text: 't' };
    for (const res of [
      await t.api('POST', '/v1/emails', { key: live.key, body }),
      await t.api('GET', '/v1/emails', { key: live.key }),
    ]) {
      assert.equal(res.status, 403, res.text);
      assert.equal(res.body.error.code, 'production_not_enabled');
    }
    const activated = await t.admin('POST', `/admin/v1/workspaces/${ws.body.id}/activate`);
    assert.equal(activated.status, 200);
    assert.equal(activated.body.activated, true);
    const sent = await t.api('POST', '/v1/emails', { key: live.key, body });
    assert.equal(sent.status, 202, sent.text);
    assert.equal(sent.body.test_mode, false);
  });

  test('the test clock is absent without --test-clock', async () => {
    const res = await t.admin('GET', '/admin/v1/clock');
    assert.equal(res.status, 404);
  });

  test('the admin API refuses a wrong token', async () => {
    const res = await fetch(`${t.url}/admin/v1/workspaces`, { headers: { authorization: 'Bearer wrong' } });
    assert.equal(res.status, 401);
    assert.equal(((await res.json()) as any).error.code, 'unauthorized');
  });
});
