// Relays sharing one database share the test clock (CONTRACT section 6: "the test-clock offset then
// lives in the database too, so every relay on it answers the same"): a request that reaches
// another relay right after an advance sees the advanced time, in the clock and in the rate windows.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startCluster, type Cluster } from '../helpers/postgres-cluster.js';

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
