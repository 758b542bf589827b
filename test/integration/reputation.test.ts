// Reputation (issue 25): bounce and complaint rates per workspace and project over 1, 7 and 30 days
// with the review/at-risk levels (5 %/10 % bounces, 0.1 %/0.5 % complaints), in the admin API and
// as /metrics gauges.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';

describe('reputation', () => {
  let t: TestRelay;
  before(async () => {
    t = await startTestRelay();
  });
  after(async () => {
    await t.stop();
  });

  test('one bounce and one complaint in four recipients: 25 % each, at risk; metrics gauges', async () => {
    const empty = await t.admin('GET', `/admin/v1/workspaces/${t.workspaceId}/reputation`);
    assert.equal(empty.status, 200, empty.text);
    assert.deepEqual(empty.body.windows.map((w: { days: number; sent: number; bounce_level: string }) => [w.days, w.sent, w.bounce_level]), [
      [1, 0, 'ok'],
      [7, 0, 'ok'],
      [30, 0, 'ok'],
    ]);

    for (const local of ['bounced', 'complained', 'one', 'two']) {
      const sent = await t.send({ to: [`${local}@${t.domain}`] });
      await t.waitForFinal(sent.body.id);
    }
    // The complaint follows the delivery: wait until it is counted.
    let body: any;
    for (let i = 0; i < 200; i++) {
      body = (await t.admin('GET', `/admin/v1/workspaces/${t.workspaceId}/reputation`)).body;
      if (body.windows[0].complained === 1) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    for (const w of body.windows) {
      assert.deepEqual([w.sent, w.bounced, w.complained, w.bounce_rate, w.complaint_rate, w.bounce_level, w.complaint_level], [4, 1, 1, 0.25, 0.25, 'at_risk', 'at_risk']);
    }
    assert.deepEqual(body.projects.map((p: { project_id: string }) => p.project_id), [t.projectId]);

    const metrics = await fetch(`${t.directUrl}/metrics`).then((r) => r.text());
    assert.ok(metrics.includes(`raven_bounce_rate{workspace="${t.workspaceId}",window="7d"} 0.25`), metrics);
    assert.ok(metrics.includes(`raven_complaint_rate{workspace="${t.workspaceId}",project="${t.projectId}",window="30d"} 0.25`));
  });

  test('an unknown workspace: 404', async () => {
    assert.equal((await t.admin('GET', '/admin/v1/workspaces/ws_unknown/reputation')).status, 404);
  });
});
