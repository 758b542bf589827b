import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Raven, signWebhook, verifyWebhook, WebhookVerificationError } from '../../sdk/index.js';
import type { WebhookVerificationReason } from '../../sdk/index.js';

const SECRET = 'whsec_test_secret';
const TS = 1614265330;
const BODY = '{"id":"evt_01","type":"email.delivered","data":{"message_id":"msg_01"}}';
const SIG = 'v1=09859c4a61a2bbdc7acf4c0c7e1f9114801a0785aad0115088fa3190f7470720';
const UTF8_BODY = '{"subject":"héllo ✓"}';
const UTF8_SIG = 'v1=62c0f85e165015fd3cfa31be47f2763799405a50c92446469d2477889ba58117';

function headers(signature: string, timestamp: string | number = TS): Record<string, string> {
  return { 'service-timestamp': String(timestamp), 'service-signature': signature };
}

function rejects(fn: () => unknown, reason: WebhookVerificationReason): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof WebhookVerificationError, `expected WebhookVerificationError, got ${String(err)}`);
    assert.equal(err.reason, reason);
    return true;
  });
}

describe('signWebhook', () => {
  test('matches the contract test vectors', () => {
    assert.equal(signWebhook(BODY, SECRET, { timestamp: TS }).signature, SIG);
    assert.equal(signWebhook(UTF8_BODY, SECRET, { timestamp: TS }).signature, UTF8_SIG);
  });

  test('signs the bytes: string, Buffer and Uint8Array give one signature', () => {
    const fromBuffer = signWebhook(Buffer.from(UTF8_BODY, 'utf8'), SECRET, { timestamp: TS });
    const fromBytes = signWebhook(new TextEncoder().encode(UTF8_BODY), SECRET, { timestamp: TS });
    assert.equal(fromBuffer.signature, UTF8_SIG);
    assert.equal(fromBytes.signature, UTF8_SIG);
  });

  test('returns ready-to-send headers and defaults the timestamp to now', () => {
    const before = Math.floor(Date.now() / 1000);
    const signed = signWebhook(BODY, SECRET);
    assert.match(signed.timestamp, /^\d+$/);
    assert.ok(Math.abs(Number(signed.timestamp) - before) <= 1);
    assert.match(signed.signature, /^v1=[0-9a-f]{64}$/);
    assert.deepEqual(signed.headers, { 'Service-Timestamp': signed.timestamp, 'Service-Signature': signed.signature });
    assert.deepEqual(verifyWebhook(BODY, signed.headers, SECRET), JSON.parse(BODY));
  });
});

describe('verifyWebhook', () => {
  test('accepts the test vectors and returns the parsed body', () => {
    assert.deepEqual(verifyWebhook(BODY, headers(SIG), SECRET, { now: TS }), JSON.parse(BODY));
    assert.deepEqual(verifyWebhook(UTF8_BODY, headers(UTF8_SIG), SECRET, { now: TS }), { subject: 'héllo ✓' });
  });

  test('accepts a Buffer body, a Uint8Array body and a fetch Headers object', () => {
    const h = new Headers({ 'Service-Timestamp': String(TS), 'Service-Signature': UTF8_SIG });
    assert.deepEqual(verifyWebhook(Buffer.from(UTF8_BODY), h, SECRET, { now: TS }), { subject: 'héllo ✓' });
    assert.deepEqual(verifyWebhook(new TextEncoder().encode(UTF8_BODY), h, SECRET, { now: TS }), {
      subject: 'héllo ✓',
    });
  });

  test('the body is bytes: a Latin-1 re-encoding of the same text fails', () => {
    rejects(() => verifyWebhook(Buffer.from(UTF8_BODY, 'latin1'), headers(UTF8_SIG), SECRET, { now: TS }), 'bad_signature');
  });

  test('header names are case-insensitive', () => {
    const h = { 'SERVICE-TIMESTAMP': String(TS), 'Service-Signature': SIG };
    assert.ok(verifyWebhook(BODY, h, SECRET, { now: TS }));
  });

  test('any one of several v1 entries may match (secret rotation)', () => {
    const other = signWebhook(BODY, 'whsec_old_secret', { timestamp: TS }).signature;
    assert.ok(verifyWebhook(BODY, headers(`${other},${SIG}`), SECRET, { now: TS }));
    assert.ok(verifyWebhook(BODY, headers(`${SIG}, ${other}`), SECRET, { now: TS }));
    assert.ok(verifyWebhook(BODY, headers(`v2=abc,${SIG}`), SECRET, { now: TS }), 'unknown schemes are skipped');
    rejects(() => verifyWebhook(BODY, headers(`${other},${other}`), SECRET, { now: TS }), 'bad_signature');
  });

  test('repeated signature headers (string[]) count as one list', () => {
    const other = signWebhook(BODY, 'whsec_old_secret', { timestamp: TS }).signature;
    assert.ok(verifyWebhook(BODY, { 'service-timestamp': String(TS), 'service-signature': [other, SIG] }, SECRET, { now: TS }));
  });

  test('rejects a wrong secret, a changed body and a changed timestamp', () => {
    rejects(() => verifyWebhook(BODY, headers(SIG), 'whsec_other', { now: TS }), 'bad_signature');
    rejects(() => verifyWebhook(BODY + ' ', headers(SIG), SECRET, { now: TS }), 'bad_signature');
    rejects(() => verifyWebhook(BODY, headers(SIG, TS + 1), SECRET, { now: TS }), 'bad_signature');
  });

  test('tolerance is 300 s both ways, inclusive', () => {
    assert.ok(verifyWebhook(BODY, headers(SIG), SECRET, { now: TS + 300 }));
    assert.ok(verifyWebhook(BODY, headers(SIG), SECRET, { now: TS - 300 }));
    rejects(() => verifyWebhook(BODY, headers(SIG), SECRET, { now: TS + 301 }), 'timestamp_too_old');
    rejects(() => verifyWebhook(BODY, headers(SIG), SECRET, { now: TS - 301 }), 'timestamp_too_new');
  });

  test('toleranceSeconds overrides the window', () => {
    assert.ok(verifyWebhook(BODY, headers(SIG), SECRET, { now: TS + 3600, toleranceSeconds: 3600 }));
    rejects(() => verifyWebhook(BODY, headers(SIG), SECRET, { now: TS + 11, toleranceSeconds: 10 }), 'timestamp_too_old');
  });

  test('defaults now to the real clock (an old vector is too old)', () => {
    rejects(() => verifyWebhook(BODY, headers(SIG), SECRET), 'timestamp_too_old');
  });

  test('missing headers', () => {
    rejects(() => verifyWebhook(BODY, { 'service-signature': SIG }, SECRET, { now: TS }), 'missing_header');
    rejects(() => verifyWebhook(BODY, { 'service-timestamp': String(TS) }, SECRET, { now: TS }), 'missing_header');
    rejects(() => verifyWebhook(BODY, headers(''), SECRET, { now: TS }), 'missing_header');
    rejects(() => verifyWebhook(BODY, { 'service-timestamp': undefined, 'service-signature': SIG }, SECRET, { now: TS }), 'missing_header');
  });

  test('bad formats', () => {
    const hex = SIG.slice(3);
    for (const sig of [hex, `v1=${hex.toUpperCase()}`, `v1=${hex.slice(1)}`, `v1=${hex}0`, 'v1=', 'v0=' + hex, 'garbage']) {
      rejects(() => verifyWebhook(BODY, headers(sig), SECRET, { now: TS }), 'bad_format');
    }
    for (const ts of ['16142653.30', '-1614265330', 'abc', '0x10', '1e9', '1614265330,1614265331']) {
      rejects(() => verifyWebhook(BODY, headers(SIG, ts), SECRET, { now: TS }), 'bad_format');
    }
  });

  test('an authentic body that is not JSON is bad_format', () => {
    const signed = signWebhook('not json', SECRET, { timestamp: TS });
    rejects(() => verifyWebhook('not json', signed.headers, SECRET, { now: TS }), 'bad_format');
  });

  test('raven.webhooks.verify and .sign are the same functions', () => {
    const raven = new Raven({ apiKey: 'rr_test_unit' });
    assert.equal(raven.webhooks.sign(BODY, SECRET, { timestamp: TS }).signature, SIG);
    assert.deepEqual(raven.webhooks.verify(BODY, headers(SIG), SECRET, { now: TS }), JSON.parse(BODY));
  });
});

describe('several secrets (a rotation)', () => {
  test('signWebhook with two secrets gives a v1= entry each, new first; verifyWebhook takes either secret alone or both', () => {
    const signed = signWebhook(BODY, [SECRET, 'whsec_old'], { timestamp: TS });
    assert.equal(signed.signature.split(',')[0], SIG);
    assert.equal(signed.signature.split(',').length, 2);
    for (const secrets of [SECRET, 'whsec_old', ['whsec_old'], ['whsec_wrong', SECRET]]) {
      assert.ok(verifyWebhook(BODY, headers(signed.signature), secrets, { now: TS }));
    }
    rejects(() => verifyWebhook(BODY, headers(signed.signature), ['whsec_wrong', 'whsec_other'], { now: TS }), 'bad_signature');
    assert.throws(() => verifyWebhook(BODY, headers(SIG), [], { now: TS }), /secret/);
  });
});
