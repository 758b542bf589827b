// Disabling a webhook endpoint (issue 25): nothing is sent to it while disabled (another endpoint
// of the project receives the same events meanwhile); enabling it sends what waited.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';
import { createEndpoint, startReceiver, type Receiver } from '../helpers/webhooks.js';

describe('disable and enable a webhook endpoint', () => {
  let t: TestRelay;
  let held: Receiver;
  let open: Receiver;
  before(async () => {
    t = await startTestRelay();
    held = await startReceiver();
    open = await startReceiver();
  });
  after(async () => {
    await held.close();
    await open.close();
    await t.stop();
  });

  test('a disabled endpoint gets nothing while another one gets the event; enabled, it gets it', async () => {
    const hook = await createEndpoint(t, held.url);
    await createEndpoint(t, open.url);
    const disabled = await t.admin('POST', `/admin/v1/webhooks/${hook.id}/disable`);
    assert.equal(disabled.status, 200, disabled.text);
    assert.deepEqual(disabled.body, { id: hook.id, enabled: false });

    await t.send({ subject: 'while disabled' });
    await open.waitForCount(1);
    assert.equal(held.requests.length, 0);

    const enabled = await t.admin('POST', `/admin/v1/webhooks/${hook.id}/enable`);
    assert.deepEqual(enabled.body, { id: hook.id, enabled: true });
    const [req] = await held.waitForCount(1);
    assert.equal(JSON.parse(req!.raw.toString('utf8')).type, 'email.queued');
  });

  test('an unknown endpoint: 404', async () => {
    assert.equal((await t.admin('POST', '/admin/v1/webhooks/whk_unknown/disable')).status, 404);
  });
});
