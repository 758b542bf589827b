// Relays sharing one database answer as one service (CONTRACT section 6) the moment a change is
// answered, though each keeps some of it in memory: the test clock ("the test-clock offset then
// lives in the database too, so every relay on it answers the same": a request that reaches
// another relay right after an advance sees the advanced time, in the clock and in the rate
// windows), and the keys (a key revoked, or a workspace activated, through one relay is so on
// another, whose key cache had the old answer, as soon as the NOTIFY sent before the answer arrives).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startCluster, waitFor, type Cluster } from '../helpers/postgres-cluster.js';
import { call } from '../helpers/start-relay.js';

describe('the test clock across two relays', () => {
  let cluster: Cluster;
  before(async () => {
    cluster = await startCluster({ relays: 2, extraArgs: ['--test-clock'], config: { limits: { testKeyPerMinute: 2 } } });
  });
  after(async () => {
    await cluster?.stop();
  });

  test('an advance on one relay is the time of the next request on the other', async () => {
    for (let round = 0; round < 4; round++) {
      const advanced = await cluster.admin(round % 2, 'POST', '/admin/v1/clock/advance', { seconds: 1_000 });
      assert.equal(advanced.status, 200, advanced.text);
      const other = await cluster.admin((round + 1) % 2, 'GET', '/admin/v1/clock');
      assert.equal(other.status, 200, other.text);
      assert.ok(Math.abs(other.body.unix - advanced.body.unix) < 5, `round ${round}: ${advanced.text} then ${other.text}`);
    }
  });

  test("a development key's minute, full on one relay, is free on the other right after a 61 s advance", async () => {
    // A fresh minute first: the advances above left no admitted request in the window.
    for (const subject of ['one', 'two']) assert.equal((await cluster.send(0, { subject })).status, 202);
    const refused = await cluster.send(1, { subject: 'three' });
    assert.equal(refused.status, 429, refused.text);
    assert.equal((await cluster.admin(0, 'POST', '/admin/v1/clock/advance', { seconds: 61 })).status, 200);
    const next = await cluster.send(1, { subject: 'four' });
    assert.equal(next.status, 202, next.text);
  });
});

describe('keys across two relays', () => {
  let cluster: Cluster;
  before(async () => {
    cluster = await startCluster({ relays: 2 });
  });
  after(async () => {
    await cluster?.stop();
  });

  const admin = async (relay: number, method: string, path: string, body?: unknown) => {
    const res = await cluster.admin(relay, method, path, body);
    assert.ok(res.status < 300, `${method} ${path}: ${res.text}`);
    return res.body;
  };
  const list = (relay: number, key: string) => call(cluster.relays[relay]!.httpUrl, 'GET', '/v1/emails', { token: key });

  test('a key revoked through one relay is refused by the other too, without a restart', async () => {
    for (let round = 0; round < 3; round++) {
      const key = await admin(0, 'POST', `/admin/v1/projects/${cluster.projectId}/keys`, { name: `k${round}`, permission: 'email:read' });
      assert.equal((await list(1, key.key)).status, 200, 'the other relay knows the key (and keeps it in its cache)');
      await admin(0, 'DELETE', `/admin/v1/keys/${key.id}`);
      // The other relay hears of it over NOTIFY, sent before the revoke is answered; on a loaded
      // machine a request may still outrun its delivery, so a few seconds are allowed. Without the
      // notification its cache answered 200 for as long as it ran.
      const refused = await waitFor('the revoked key refused by the other relay', async () => {
        const res = await list(1, key.key);
        return res.status !== 200 && res;
      }, 5_000);
      assert.equal(refused.status, 401, `round ${round}: ${refused.text}`);
      assert.equal(refused.body.error.code, 'invalid_api_key');
    }
  });

  test('a workspace activated through one relay lets its rr_live_ keys through the other too, without a restart', async () => {
    const project = await admin(0, 'POST', `/admin/v1/workspaces/${cluster.workspaceId}/projects`, { name: 'live', environment: 'production' });
    const key = await admin(0, 'POST', `/admin/v1/projects/${project.id}/keys`, { name: 'live', permission: 'email:read' });
    const before = await list(1, key.key);
    assert.equal(before.status, 403, before.text);
    assert.equal(before.body.error.code, 'production_not_enabled');
    await admin(0, 'POST', `/admin/v1/workspaces/${cluster.workspaceId}/activate`);
    const after = await waitFor('the live key let through by the other relay', async () => {
      const res = await list(1, key.key);
      return res.status !== 403 && res;
    }, 5_000);
    assert.equal(after.status, 200, after.text);
  });
});
