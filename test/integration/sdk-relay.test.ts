// The SDK (Raven and RavenAdmin) against the real relay, through the contract-checking proxy.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import {
  AuthenticationError,
  IdempotencyConflictError,
  NotFoundError,
  Raven,
  RavenAdmin,
  TestRecipientNotAllowedError,
  DomainNotVerifiedError,
  ValidationError,
  verifyWebhook,
  type SendEmailParams,
  type WebhookEvent,
} from '../../sdk/index.js';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';

let t: TestRelay;
let raven: Raven;
let admin: RavenAdmin;
before(async () => {
  t = await startTestRelay();
  raven = new Raven({ apiKey: t.apiKey, baseUrl: t.url });
  admin = new RavenAdmin({ adminToken: t.adminToken, baseUrl: t.url });
});
after(async () => {
  await raven.close();
  await admin.close();
  await t.stop();
});

const email = (fields: Partial<SendEmailParams> = {}): SendEmailParams => ({
  from: `Raven Test <sender@${t.domain}>`,
  to: `user@${t.domain}`,
  subject: 'Hello from the SDK',
  text: 'Hi there',
  ...fields,
});

describe('emails', () => {
  test('send queues, and a replay with the same key returns the same email', async () => {
    const first = await raven.emails.send(email()).withResponse();
    assert.equal(first.response.status, 202);
    assert.equal(first.data.status, 'queued');
    assert.match(String(first.response.requestId), /^req_/);
    assert.ok(first.idempotencyKey);
    const replay = await raven.emails.send(email(), { idempotencyKey: first.idempotencyKey });
    assert.deepEqual(replay, first.data);
  });

  test('the same key with another body is an IdempotencyConflictError', async () => {
    const key = `sdk-${Date.now()}`;
    await raven.emails.send(email(), { idempotencyKey: key });
    const err = await raven.emails.send(email({ subject: 'changed' }), { idempotencyKey: key }).catch((e: unknown) => e);
    assert.ok(err instanceof IdempotencyConflictError, String(err));
    assert.equal(err.status, 409);
    assert.match(String(err.requestId), /^req_/);
  });

  test('get returns the detail with recipients and events', async () => {
    const { id } = await raven.emails.send(email({ tags: { category: 'sdk' } }));
    const detail = await raven.emails.get(id);
    assert.equal(detail.id, id);
    assert.deepEqual(detail.tags, { category: 'sdk' });
    assert.ok(detail.events.some((e) => e.type === 'email.queued'));
    assert.equal(detail.recipients[0]!.email, `user@${t.domain}`);
  });

  test('list pages with for await and getNextPage', async () => {
    const recipient = `pages-${Date.now()}@${t.domain}`;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await raven.emails.send(email({ to: recipient, subject: `p${i}` }))).id);
    const walked: string[] = [];
    for await (const e of raven.emails.list({ recipient, limit: 2 })) walked.push(e.id);
    assert.deepEqual(walked, [...ids].reverse());
    const first = await raven.emails.list({ recipient, limit: 2 });
    assert.equal(first.emails.length, 2);
    assert.ok(first.hasNextPage());
    const second = await first.getNextPage();
    assert.deepEqual(second.emails.map((e) => e.id), [ids[2], ids[1]]);
  });

  test('errors come back typed', async () => {
    const bad = new Raven({ apiKey: 'rr_test_nope', baseUrl: t.url });
    await assert.rejects(bad.emails.list(), AuthenticationError);
    await bad.close();
    await assert.rejects(raven.emails.get('em_doesnotexist'), NotFoundError);
    const invalid = await raven.emails.send(email({ subject: 'a\nb' })).catch((e: unknown) => e);
    assert.ok(invalid instanceof ValidationError, String(invalid));
    assert.ok(invalid.details.some((d) => d.field === 'subject'));
    await assert.rejects(raven.emails.send(email({ from: 'x@unverified.test' })), DomainNotVerifiedError);
    await assert.rejects(raven.emails.send(email({ to: 'x@elsewhere.test' })), TestRecipientNotAllowedError);
  });
});

describe('admin', () => {
  test('a new project, domain and key can send; the sink captures the message', async () => {
    const project = await admin.projects.create(t.workspaceId, { name: 'sdk', environment: 'development' });
    const domainName = `sdk${Date.now().toString(36)}.test`;
    const domain = await admin.domains.create(project.id, { name: domainName });
    assert.ok(domain.records.length > 0);
    assert.equal((await admin.domains.verify(domain.id, { force: true })).status, 'verified');
    const key = await admin.keys.create(project.id, { name: 'sdk', permission: 'email:send' });
    assert.match(key.key, /^rr_test_/);
    assert.ok((await admin.keys.list(project.id)).keys.some((k) => k.id === key.id));

    const client = new Raven({ apiKey: key.key, baseUrl: t.url });
    const to = `someone@${domainName}`;
    const { id } = await client.emails.send({ from: `a@${domainName}`, to, subject: 'captured', text: 'body' });
    const final = await t.waitForFinal(id, { key: key.key });
    assert.equal(final.status, 'delivered');
    const { messages } = await admin.messages.list({ to });
    assert.equal(messages.length, 1);
    assert.match(await admin.messages.raw(messages[0]!.id), /captured/);

    await admin.keys.revoke(key.id);
    await assert.rejects(client.emails.list(), AuthenticationError);
    await client.close();
  });

  test('a suppressed recipient makes send resolve as suppressed', async () => {
    const address = `blocked-${Date.now()}@${t.domain}`;
    await admin.suppressions.create(t.workspaceId, { email: address, reason: 'manual' });
    const result = await raven.emails.send(email({ to: address }));
    assert.equal(result.status, 'suppressed');
    assert.ok((await admin.suppressions.list(t.workspaceId)).suppressions.some((s) => s.email === address));
    await admin.suppressions.delete(t.workspaceId, address);
    assert.equal((await raven.emails.send(email({ to: address }))).status, 'queued');
  });

  test('usage counts accepted recipients', async () => {
    const usage = await admin.usage(t.workspaceId);
    assert.match(usage.month, /^\d{4}-\d{2}$/);
    assert.ok(usage.workspace.used > 0);
  });
});

describe('webhooks', () => {
  let receiver: Server;
  const received: Array<{ body: Buffer; headers: Record<string, string | string[] | undefined> }> = [];
  before(async () => {
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ body: Buffer.concat(chunks), headers: req.headers });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  });

  test('events from the relay verify with verifyWebhook and the endpoint secret', async () => {
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const endpoint = await admin.webhooks.create(t.projectId, { url, events: ['email.delivered'] });
    try {
      const { id } = await raven.emails.send(email());
      const deadline = Date.now() + 15_000;
      let event: WebhookEvent | undefined;
      while (!event && Date.now() < deadline) {
        for (const r of received) {
          const e = verifyWebhook(r.body, r.headers, endpoint.secret);
          if (e.data.email_id === id) event = e;
        }
        if (!event) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.ok(event, 'no email.delivered webhook arrived');
      assert.equal(event.type, 'email.delivered');
      assert.equal(event.data.test_mode, true);
      // The attempt is recorded once the endpoint has answered: it may lag the POST a little.
      let recorded = false;
      while (!recorded && Date.now() < deadline) {
        recorded = (await admin.webhooks.deliveries(endpoint.id)).deliveries.some((d) => d.event_id === event!.id);
        if (!recorded) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.ok(recorded, 'the delivery attempt was not recorded');
    } finally {
      await admin.webhooks.delete(endpoint.id);
    }
  });
});
