// Delivery seen through the real relay (app.ts) and its HTTP API: POST /v1/emails, the email's
// outcomes and timeline, the test clock, suppressions, and the captured mail admin API.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';

describe('delivery through the relay', () => {
  let t: TestRelay;
  before(async () => {
    t = await startTestRelay({ flags: { testClock: true } });
  });
  after(() => t.stop());

  test('queued -> delivered, with the captured message readable through the admin API', async () => {
    const d = t.domain;
    const sent = await t.send({
      to: [`ada@${d}`],
      cc: `carol@${d}`,
      bcc: `hidden@${d}`,
      subject: 'Ça marche ✓',
      text: 'plain ✓',
      html: '<b>html ✓</b>',
      headers: { 'X-Entity-Ref': 'order-42' },
    });
    assert.equal(sent.status, 202, sent.text);
    const email = await t.waitForFinal(sent.body.id);
    assert.equal(email.status, 'delivered');
    assert.deepEqual(
      email.recipients.map((r: any) => [r.email, r.type, r.status]),
      [
        [`ada@${d}`, 'to', 'delivered'],
        [`carol@${d}`, 'cc', 'delivered'],
      ],
    );
    assert.match(email.providerMessageId, /^msg_/);
    assert.doesNotMatch(JSON.stringify(email), /hidden@/, 'BCC never read back');

    const list = await t.admin('GET', `/admin/v1/messages?to=${encodeURIComponent(`HIDDEN@${d}`)}`);
    assert.equal(list.status, 200, list.text);
    assert.equal(list.body.messages.length, 1);
    const summary = list.body.messages[0];
    assert.equal(summary.id, email.providerMessageId);
    assert.deepEqual(summary.to, [`ada@${d}`, `carol@${d}`, `hidden@${d}`]);
    assert.equal(summary.from, `bounce+${sent.body.id}@raven.${d}`);
    assert.equal(summary.subject, 'Ça marche ✓');

    const detail = await t.admin('GET', `/admin/v1/messages/${summary.id}`);
    assert.equal(detail.status, 200, detail.text);
    assert.equal(detail.body.text.trim(), 'plain ✓');
    assert.equal(detail.body.html.trim(), '<b>html ✓</b>');
    const names = detail.body.headers.map(([name]: [string, string]) => name.toLowerCase());
    assert.ok(!names.includes('bcc'));
    assert.deepEqual(detail.body.headers.find(([n]: [string]) => n === 'Subject'), ['Subject', 'Ça marche ✓']);
    assert.deepEqual(detail.body.headers.find(([n]: [string]) => n === 'X-Entity-Ref'), ['X-Entity-Ref', 'order-42']);
    assert.equal(detail.body.size, summary.size);

    const raw = await t.admin('GET', `/admin/v1/messages/${summary.id}/raw`);
    assert.equal(raw.status, 200);
    assert.match(raw.headers.get('content-type') ?? '', /^message\/rfc822/);
    assert.equal(Buffer.byteLength(raw.text), summary.size);
    assert.match(raw.text, /^Subject: =\?UTF-8\?/m);
  });

  test('a hard bounce suppresses the address: the next send to it is suppressed at admission', async () => {
    const to = `bounced@${t.domain}`;
    const first = await t.send({ to });
    assert.equal(first.status, 202, first.text);
    const email = await t.waitForFinal(first.body.id);
    assert.equal(email.status, 'bounced');
    assert.deepEqual(email.events.map((e: any) => e.type), ['email.queued', 'email.bounced']);
    const again = await t.send({ to });
    assert.equal(again.status, 200, again.text);
    assert.deepEqual({ status: again.body.status, reason: again.body.reason }, { status: 'suppressed', reason: 'hard_bounce' });
  });

  test('a complaint leaves the email delivered and suppresses the address', async () => {
    const to = `complained@${t.domain}`;
    const sent = await t.send({ to });
    await t.waitForFinal(sent.body.id);
    const deadline = Date.now() + 5_000;
    let email: any;
    do {
      email = (await t.api('GET', `/v1/emails/${sent.body.id}`)).body;
    } while (email.recipients[0].status !== 'complained' && Date.now() < deadline && (await new Promise((r) => setTimeout(r, 25))) === undefined);
    assert.equal(email.status, 'delivered');
    assert.equal(email.recipients[0].status, 'complained');
    assert.deepEqual(email.events.map((e: any) => e.type), ['email.queued', 'email.sent', 'email.delivered', 'email.complained']);
    const suppressions = await t.admin('GET', `/admin/v1/workspaces/${t.workspaceId}/suppressions`);
    assert.ok(suppressions.body.suppressions.some((s: any) => s.email === to && s.reason === 'complaint'));
  });

  test('delayed: the retry is due when the test clock advances past the backoff', async () => {
    const sent = await t.send({ to: `delayed@${t.domain}` });
    const deadline = Date.now() + 5_000;
    let email: any;
    do {
      email = (await t.api('GET', `/v1/emails/${sent.body.id}`)).body;
    } while (email.recipients[0].status !== 'delivery_delayed' && Date.now() < deadline && (await new Promise((r) => setTimeout(r, 25))) === undefined);
    assert.equal(email.recipients[0].status, 'delivery_delayed');
    assert.equal(email.status, 'queued');
    const advanced = await t.admin('POST', '/admin/v1/clock/advance', { seconds: 31 });
    assert.equal(advanced.status, 200, advanced.text);
    email = await t.waitForFinal(sent.body.id);
    assert.equal(email.status, 'delivered');
    assert.deepEqual(email.events.map((e: any) => e.type), ['email.queued', 'email.delivery_delayed', 'email.sent', 'email.delivered']);
  });

  test('unknown and rejected end the email as delivery_unknown and failed', async () => {
    const unknown = await t.send({ to: `unknown@${t.domain}` });
    const rejected = await t.send({ to: `rejected@${t.domain}` });
    assert.equal((await t.waitForFinal(unknown.body.id)).status, 'delivery_unknown');
    assert.equal((await t.waitForFinal(rejected.body.id)).status, 'failed');
  });

  test('captured mail: limit, validation, not found, delete', async () => {
    const limited = await t.admin('GET', '/admin/v1/messages?limit=1');
    assert.equal(limited.status, 200);
    assert.equal(limited.body.messages.length, 1);
    for (const bad of ['limit=0', 'limit=1001', 'limit=abc', 'to=']) {
      const res = await t.admin('GET', `/admin/v1/messages?${bad}`);
      assert.equal(res.status, 422, `${bad}: ${res.text}`);
      assert.equal(res.body.error.code, 'validation_error');
    }
    const missing = await t.admin('GET', '/admin/v1/messages/msg_00000000000000000000000000');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, 'not_found');
    assert.equal((await t.admin('GET', '/admin/v1/messages/msg_00000000000000000000000000/raw')).status, 404);
    const unauthorized = await fetch(`${t.url}/admin/v1/messages`);
    assert.equal(unauthorized.status, 401);
    const deleted = await t.admin('DELETE', '/admin/v1/messages');
    assert.equal(deleted.status, 204);
    assert.deepEqual((await t.admin('GET', '/admin/v1/messages')).body, { messages: [] });
  });
});
