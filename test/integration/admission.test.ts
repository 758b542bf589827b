// POST /v1/emails over real HTTP against the real relay: field rules, order of checks,
// idempotency, suppression and the development recipient rule.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createProjectWithKey, startTestRelay, type TestRelay } from '../helpers/start-relay.js';

let t: TestRelay;
before(async () => {
  t = await startTestRelay();
});
after(async () => {
  await t.stop();
});

function expectError(res: { status: number; body: any; text: string }, status: number, code: string) {
  assert.equal(res.status, status, res.text);
  assert.equal(res.body.error.code, code, res.text);
  assert.equal(typeof res.body.error.message, 'string');
}

describe('field rules', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['missing from', { from: undefined }, 'from'],
    ['from not an address', { from: 'not-an-address' }, 'from'],
    ['from with CRLF', { from: 'A <a@example.test>\r\nBcc: x@y.z' }, 'from'],
    ['missing to', { to: undefined }, 'to'],
    ['empty to array', { to: [] }, 'to'],
    ['to item not a string', { to: [42] }, 'to[0]'],
    ['bad cc address', { cc: ['ok@example.test', 'bad'] }, 'cc[1]'],
    ['missing subject', { subject: undefined }, 'subject'],
    ['empty subject', { subject: '' }, 'subject'],
    ['subject too long', { subject: 'x'.repeat(999) }, 'subject'],
    ['subject with LF', { subject: 'a\nb' }, 'subject'],
    ['subject with U+2028', { subject: 'a\u2028b' }, 'subject'],
    ['subject with NUL', { subject: 'a\u0000b' }, 'subject'],
    ['no body', { text: undefined, html: '' }, 'text'],
    ['reply_to invalid', { reply_to: 'nope' }, 'reply_to'],
    ['reserved header', { headers: { Bcc: 'x@example.test' } }, 'headers.Bcc'],
    ['Service- header reserved', { headers: { 'Service-Signature': 'x' } }, 'headers.Service-Signature'],
    ['header name with colon', { headers: { 'X:Y': 'v' } }, 'headers.X:Y'],
    ['header value with CR', { headers: { 'X-Ok': 'a\rb' } }, 'headers.X-Ok'],
    ['too many tags', { tags: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`t${i}`, 'v'])) }, 'tags'],
    ['reserved tag name', { tags: { rr_x: 'v' } }, 'tags.rr_x'],
    ['non-ASCII tag', { tags: { kind: 'é' } }, 'tags.kind'],
    ['metadata value not a string', { metadata: { a: 1 } }, 'metadata.a'],
    ['metadata key too long', { metadata: { ['k'.repeat(41)]: 'v' } }, `metadata.${'k'.repeat(41)}`],
    ['unknown field', { attachments: [] }, 'attachments'],
    ['local part over 64', { to: `${'a'.repeat(65)}@example.test` }, 'to'],
  ];
  for (const [name, fields, field] of cases) {
    test(name, async () => {
      const res = await t.send(fields);
      expectError(res, 422, 'validation_error');
      const fieldsReported = res.body.error.details.map((d: any) => d.field);
      assert.ok(fieldsReported.includes(field), `expected a detail for ${field}, got ${JSON.stringify(fieldsReported)}`);
    });
  }

  test('more than 50 recipients in total', async () => {
    const to = Array.from({ length: 30 }, (_, i) => `to${i}@example.test`);
    const bcc = Array.from({ length: 21 }, (_, i) => `bcc${i}@example.test`);
    expectError(await t.send({ to, bcc }), 422, 'validation_error');
  });

  test('exactly 50 recipients and a 998-character subject are accepted', async () => {
    const to = Array.from({ length: 50 }, (_, i) => `to${i}@example.test`);
    const res = await t.send({ to, subject: 'é'.repeat(998) });
    assert.equal(res.status, 202, res.text);
  });

  test('bad Idempotency-Key', async () => {
    expectError(await t.send({}, { idempotencyKey: 'has space' }), 422, 'validation_error');
    expectError(await t.send({}, { idempotencyKey: 'x'.repeat(129) }), 422, 'validation_error');
  });
});

describe('request shape', () => {
  test('invalid JSON, non-object, repeated keys and wrong content type are 400', async () => {
    expectError(await t.api('POST', '/v1/emails', { body: '{"from":' }), 400, 'invalid_request');
    expectError(await t.api('POST', '/v1/emails', { body: '[1,2]' }), 400, 'invalid_request');
    expectError(
      await t.api('POST', '/v1/emails', { body: '{"subject":"a","subject":"b"}' }),
      400,
      'invalid_request',
    );
    expectError(
      await t.api('POST', '/v1/emails', { body: '{}', headers: { 'content-type': 'text/plain' } }),
      400,
      'invalid_request',
    );
  });

  test('a body over 10 MiB is 413 message_too_large, whatever its Content-Type (size is check 3, the JSON check 4)', async () => {
    const res = await t.send({ text: 'x'.repeat(10 * 1024 * 1024 + 1) });
    expectError(res, 413, 'message_too_large');
    const plain = await t.api('POST', '/v1/emails', { body: 'x'.repeat(10 * 1024 * 1024 + 1), headers: { 'content-type': 'text/plain' } });
    expectError(plain, 413, 'message_too_large');
  });

  // A write batch splits its rows across statements of at most 8 MiB of JSON: these take three.
  test('concurrent bodies near the 10 MiB limit are admitted together', async () => {
    const text = 'x'.repeat(9 * 1024 * 1024);
    const results = await Promise.all([0, 1, 2].map((i) => t.send({ subject: `big ${i}`, text })));
    for (const r of results) assert.equal(r.status, 202, r.text);
  });

  test('unknown route is 404, wrong method 405, both before authentication', async () => {
    expectError(await t.api('GET', '/v1/nothing', { key: null }), 404, 'not_found');
    expectError(await t.api('DELETE', '/v1/emails', { key: null }), 405, 'method_not_allowed');
  });

  test('every response carries a Request-Id', async () => {
    const res = await t.api('GET', '/v1/emails');
    assert.match(res.headers.get('request-id') ?? '', /^req_/);
  });
});

describe('authentication and permissions', () => {
  test('missing, malformed and unknown keys are 401 invalid_api_key', async () => {
    expectError(await t.send({}, { key: '' }), 401, 'invalid_api_key');
    expectError(await t.api('GET', '/v1/emails', { key: 'rr_test_nope' }), 401, 'invalid_api_key');
    expectError(await t.api('GET', '/v1/emails', { key: 'sk_live_whatever' }), 401, 'invalid_api_key');
  });

  test('an email:read key cannot send (403 forbidden)', async () => {
    const reader = await createProjectWithKey(t, { permission: 'email:read' });
    const res = await t.api('POST', '/v1/emails', {
      key: reader.key,
      body: { from: `a@${reader.domain}`, to: `b@${reader.domain}`, subject: 's', text: 't' },
    });
    expectError(res, 403, 'forbidden');
  });

  test('a revoked key is refused on its next request, though its relay has it cached', async () => {
    const p = await createProjectWithKey(t);
    for (let i = 0; i < 2; i++) assert.equal((await t.api('GET', '/v1/emails', { key: p.key })).status, 200);
    const revoked = await t.admin('DELETE', `/admin/v1/keys/${p.keyId}`);
    assert.equal(revoked.status, 204);
    expectError(await t.api('GET', '/v1/emails', { key: p.key }), 401, 'invalid_api_key');
  });
});

describe('sender and recipients', () => {
  test('an unverified sender domain is 422 domain_not_verified', async () => {
    expectError(await t.send({ from: 'a@unverified.test' }), 422, 'domain_not_verified');
  });

  test('a verified parent does not admit a subdomain sender', async () => {
    expectError(await t.send({ from: `a@sub.${t.domain}` }), 422, 'domain_not_verified');
  });

  test('a development key may only send to verified domains of its project', async () => {
    expectError(await t.send({ to: 'someone@gmail.com' }), 422, 'test_recipient_not_allowed');
    expectError(await t.send({ bcc: [`x@sub.${t.domain}`] }), 422, 'test_recipient_not_allowed');
  });

  test('sender domain is compared case-insensitively', async () => {
    const res = await t.send({ from: `a@${t.domain.toUpperCase()}`, to: `B@${t.domain.toUpperCase()}` });
    assert.equal(res.status, 202, res.text);
    assert.equal(res.body.status, 'queued');
    assert.equal(res.body.test_mode, true);
    assert.match(res.body.id, /^em_/);
  });
});

describe('idempotency', () => {
  test('same key and same body replays the original result', async () => {
    const first = await t.send({ subject: 'idem' }, { idempotencyKey: 'order-1' });
    assert.equal(first.status, 202, first.text);
    // Key order and whitespace do not matter.
    const again = await t.api('POST', '/v1/emails', {
      headers: { 'idempotency-key': 'order-1' },
      body: `{ "text": "Hi there", "subject": "idem", "to": "user@${t.domain}", "from": "Raven Test <sender@${t.domain}>" }`,
    });
    assert.equal(again.status, 202, again.text);
    assert.deepEqual(again.body, first.body);
  });

  test('same key with a different body is 409 idempotency_conflict', async () => {
    const first = await t.send({ subject: 'one' }, { idempotencyKey: 'order-2' });
    assert.equal(first.status, 202);
    expectError(await t.send({ subject: 'two' }, { idempotencyKey: 'order-2' }), 409, 'idempotency_conflict');
  });

  test('a refused request stores nothing: the same key with a corrected body succeeds', async () => {
    expectError(await t.send({ from: 'a@unverified.test' }, { idempotencyKey: 'order-3' }), 422, 'domain_not_verified');
    const res = await t.send({}, { idempotencyKey: 'order-3' });
    assert.equal(res.status, 202, res.text);
  });

  test('concurrent identical requests create exactly one email', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, () => t.send({ subject: 'concurrent' }, { idempotencyKey: 'order-4' })),
    );
    const ids = new Set(results.map((r) => r.body.id));
    assert.equal(ids.size, 1, JSON.stringify(results.map((r) => r.body)));
    assert.ok(results.every((r) => r.status === 202));
    const list = await t.api('GET', `/v1/emails?limit=100`);
    assert.equal(list.body.emails.filter((e: any) => e.subject === 'concurrent').length, 1);
  });

  // Admissions that arrive together are decided together (one write batch): the first admitted
  // body owns the key, whatever its place in the batch.
  test('concurrent requests with one key and different bodies: one email, the others 409', async () => {
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => t.send({ subject: `racing ${i}` }, { idempotencyKey: 'order-race' })),
    );
    const admitted = results.filter((r) => r.status === 202);
    assert.equal(admitted.length, 1, JSON.stringify(results.map((r) => r.body)));
    for (const r of results.filter((x) => x.status !== 202)) expectError(r, 409, 'idempotency_conflict');
    const list = await t.api('GET', `/v1/emails?limit=100`);
    assert.equal(list.body.emails.filter((e: any) => e.subject.startsWith('racing ')).length, 1);
  });

  test('keys are scoped to the project', async () => {
    const other = await createProjectWithKey(t);
    const a = await t.send({}, { idempotencyKey: 'shared-key' });
    const b = await t.api('POST', '/v1/emails', {
      key: other.key,
      headers: { 'idempotency-key': 'shared-key' },
      body: { from: `a@${other.domain}`, to: `b@${other.domain}`, subject: 'other', text: 'x' },
    });
    assert.equal(a.status, 202);
    assert.equal(b.status, 202);
    assert.notEqual(a.body.id, b.body.id);
  });
});

describe('suppressions', () => {
  test('a suppressed recipient makes the whole message suppressed, with no charge', async () => {
    const address = `blocked@${t.domain}`;
    const added = await t.admin('POST', `/admin/v1/workspaces/${t.workspaceId}/suppressions`, { email: address, reason: 'manual' });
    assert.equal(added.status, 201, added.text);
    const before = await t.admin('GET', `/admin/v1/workspaces/${t.workspaceId}/usage`);
    const res = await t.send({ to: [`ok@${t.domain}`], bcc: [address.toUpperCase()] });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.status, 'suppressed');
    assert.equal(res.body.reason, 'manual');
    const afterUsage = await t.admin('GET', `/admin/v1/workspaces/${t.workspaceId}/usage`);
    assert.equal(afterUsage.body.workspace.used, before.body.workspace.used);
    const detail = await t.api('GET', `/v1/emails/${res.body.id}`);
    assert.equal(detail.body.status, 'suppressed');
    assert.deepEqual(detail.body.events.map((e: any) => e.type), ['email.suppressed']);
    const removed = await t.admin('DELETE', `/admin/v1/workspaces/${t.workspaceId}/suppressions/${encodeURIComponent(address)}`);
    assert.equal(removed.status, 204);
    const again = await t.send({ to: address });
    assert.equal(again.status, 202);
  });
});
