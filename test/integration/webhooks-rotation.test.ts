// Rotating a webhook signing secret with an overlap (issue 25, CONTRACT section 11): during the
// overlap every request carries `v1=<new>,v1=<old>`, so a receiver holding only the old secret and
// one holding only the new one both verify; after it (on the relay's test clock) only the new one.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { computeSignature, verifyWebhook } from '../../sdk/webhooks.js';
import { ravenctl } from '../helpers/ravenctl.js';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';
import { advanceClock, createEndpoint, startReceiver, type Receiver } from '../helpers/webhooks.js';

describe('webhook secret rotation', () => {
  let t: TestRelay;
  let receiver: Receiver;
  const dir = mkdtempSync(path.join(tmpdir(), 'raven-rotation-'));
  before(async () => {
    t = await startTestRelay({ flags: { testClock: true } });
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await t.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const relayNow = () => t.relay.services.clock.unix();

  test('old-secret receiver, then new-secret receiver: both verify during the overlap, only the new after it', async () => {
    const hook = await createEndpoint(t, receiver.url);
    const oldSecret = hook.secret;
    const rotated = await t.admin('POST', `/admin/v1/webhooks/${hook.id}/rotate-secret`, { overlap_seconds: 3600 });
    assert.equal(rotated.status, 200, rotated.text);
    assert.deepEqual(Object.keys(rotated.body).sort(), ['id', 'secret']);
    assert.equal(rotated.body.id, hook.id);
    const newSecret: string = rotated.body.secret;
    assert.match(newSecret, /^whsec_/);
    assert.notEqual(newSecret, oldSecret);

    await t.send({ subject: 'during the overlap' });
    const [during] = await receiver.waitForCount(1);
    const entries = String(during!.headers['service-signature']).split(',');
    const ts = String(during!.headers['service-timestamp']);
    assert.deepEqual(entries, [`v1=${computeSignature(during!.raw, newSecret, ts)}`, `v1=${computeSignature(during!.raw, oldSecret, ts)}`]);
    assert.ok(verifyWebhook(during!.raw, during!.headers, oldSecret, { now: relayNow() }), 'a receiver holding only the old secret');
    assert.ok(verifyWebhook(during!.raw, during!.headers, newSecret, { now: relayNow() }), 'a receiver holding only the new secret');

    // ravenctl webhooks verify takes --secret more than once.
    const bodyFile = path.join(dir, 'body.json');
    writeFileSync(bodyFile, during!.raw);
    const verify = (secrets: string[]) =>
      ravenctl(['webhooks', 'verify', ...secrets.flatMap((s) => ['--secret', s]), '--timestamp', ts, '--signature', entries[1]!, '--body-file', bodyFile, '--now', String(relayNow()), '--json']);
    assert.equal((await verify(['whsec_wrong', oldSecret])).code, 0);
    assert.equal((await verify(['whsec_wrong'])).code, 1);

    // The overlap ends on the relay clock: one entry, the new secret's.
    await advanceClock(t, 3601);
    await t.send({ subject: 'after the overlap' });
    const [, afterwards] = await receiver.waitForCount(2);
    assert.match(String(afterwards!.headers['service-signature']), /^v1=[0-9a-f]{64}$/);
    assert.ok(verifyWebhook(afterwards!.raw, afterwards!.headers, newSecret, { now: relayNow() }));
    assert.throws(() => verifyWebhook(afterwards!.raw, afterwards!.headers, oldSecret, { now: relayNow() }), /signature/);
  });

  test('an overlap out of range or of the wrong type: 422; an unknown endpoint: 404', async () => {
    const hook = await createEndpoint(t, receiver.url, ['email.bounced']);
    for (const body of [{ overlap_seconds: -1 }, { overlap_seconds: 604_801 }, { overlap_seconds: 1.5 }, { overlap_seconds: '60' }, { other: 1 }]) {
      const res = await t.admin('POST', `/admin/v1/webhooks/${hook.id}/rotate-secret`, body);
      assert.equal(res.status, 422, JSON.stringify(body));
      assert.equal(res.body.error.code, 'validation_error');
    }
    for (const body of [{ overlap_seconds: 0 }, { overlap_seconds: 604_800 }, undefined]) {
      assert.equal((await t.admin('POST', `/admin/v1/webhooks/${hook.id}/rotate-secret`, body)).status, 200, JSON.stringify(body));
    }
    const unknown = await t.admin('POST', '/admin/v1/webhooks/whk_unknown/rotate-secret', {});
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'not_found');
  });
});
