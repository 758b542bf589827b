// ravenctl send: parsing of the repeatable --header/--tag/--metadata flags and the local checks
// behind --dry-run (CONTRACT section 2 field rules).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { UsageError } from '../../cli/errors.js';
import {
  collectPairs,
  mailboxProblem,
  parseHeaderFlag,
  parseKeyValueFlag,
  validateSendBody,
  validIdempotencyKey,
  type SendBody,
} from '../../cli/send-request.js';

const base: SendBody = { from: 'Acme <hello@example.test>', to: ['ada@example.test'], subject: 'Hi', text: 'Hello' };

describe('--header', () => {
  test('splits at the first colon and trims around the value', () => {
    assert.deepEqual(parseHeaderFlag('X-Campaign: spring'), ['X-Campaign', 'spring']);
    assert.deepEqual(parseHeaderFlag('X-Url:https://a.example/b?c=d'), ['X-Url', 'https://a.example/b?c=d']);
    assert.deepEqual(parseHeaderFlag('X-Empty:'), ['X-Empty', '']);
  });
  test('without a colon or a name it is a usage error', () => {
    assert.throws(() => parseHeaderFlag('X-Campaign spring'), UsageError);
    assert.throws(() => parseHeaderFlag(': value'), UsageError);
  });
  test('repeats are collected; the same name twice (any case) is refused', () => {
    assert.deepEqual(collectPairs('--header', ['A: 1', 'B: 2']), { A: '1', B: '2' });
    assert.throws(() => collectPairs('--header', ['X-A: 1', 'x-a: 2']), /given twice/);
    assert.equal(collectPairs('--header', []), undefined);
    assert.equal(collectPairs('--header', undefined), undefined);
  });
});

describe('--tag and --metadata', () => {
  test('split at the first =, so values may hold =', () => {
    assert.deepEqual(parseKeyValueFlag('--tag', 'campaign=spring'), ['campaign', 'spring']);
    assert.deepEqual(parseKeyValueFlag('--metadata', 'query=a=b&c=d'), ['query', 'a=b&c=d']);
    assert.deepEqual(parseKeyValueFlag('--metadata', 'empty='), ['empty', '']);
  });
  test('a missing key or = is a usage error (exit 2)', () => {
    for (const raw of ['novalue', '=value']) {
      assert.throws(
        () => parseKeyValueFlag('--tag', raw),
        (err: unknown) => err instanceof UsageError && err.exitCode === 2,
      );
    }
  });
  test('repeats become one object', () => {
    assert.deepEqual(collectPairs('--tag', ['a=1', 'b=2']), { a: '1', b: '2' });
    assert.deepEqual(collectPairs('--metadata', ['order=42', 'user=ada']), { order: '42', user: 'ada' });
    assert.throws(() => collectPairs('--tag', ['a=1', 'a=2']), /given twice/);
  });
});

describe('mailboxProblem (the relay\'s rule, checked at each prompt)', () => {
  test('accepts addr@domain and Name <addr@domain>', () => {
    assert.equal(mailboxProblem('ada@example.test'), undefined);
    assert.equal(mailboxProblem('Ada Lovelace <ada@example.test>'), undefined);
    assert.equal(mailboxProblem('"Lovelace, Ada" <ada@example.test>'), undefined);
  });
  test('refuses what is not a mailbox', () => {
    for (const bad of ['ada', 'ada@', '@example.test', 'a b@example.test', 'ada@example.test\r\nBcc: x@y.z', `${'a'.repeat(65)}@example.test`]) {
      assert.equal(typeof mailboxProblem(bad), 'string', bad);
    }
  });
});

describe('validateSendBody (send --dry-run)', () => {
  test('a valid request has no problems', () => {
    assert.deepEqual(validateSendBody({ ...base, tags: { campaign: 'spring-2026' }, headers: { 'X-Campaign': 'a' } }), []);
  });
  test('more than 50 recipients across to, cc and bcc', () => {
    const many = (n: number, p: string) => Array.from({ length: n }, (_, i) => `${p}${i}@example.test`);
    assert.deepEqual(validateSendBody({ ...base, to: many(20, 't'), cc: many(20, 'c'), bcc: many(10, 'b') }), []);
    const details = validateSendBody({ ...base, to: many(20, 't'), cc: many(20, 'c'), bcc: many(11, 'b') });
    assert.ok(details.some((d) => /at most 50 recipients \(got 51\)/.test(d.message)), JSON.stringify(details));
  });
  test('subject: 1 to 998 characters, no line break of any kind', () => {
    assert.deepEqual(validateSendBody({ ...base, subject: 'x'.repeat(998) }), []);
    for (const subject of ['', 'x'.repeat(999), 'a\nb', 'a\rb', 'a\u2028b', 'a\u0085b']) {
      assert.ok(validateSendBody({ ...base, subject }).some((d) => d.field === 'subject'), JSON.stringify(subject));
    }
  });
  test('a body is required', () => {
    assert.deepEqual(validateSendBody({ ...base, text: undefined, html: '<p>x</p>' }), []);
    assert.ok(validateSendBody({ ...base, text: undefined }).some((d) => d.field === 'text'));
  });
  test('tags: at most 20, ASCII letters/digits/_/-, rr_ reserved', () => {
    const tags = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`t${i}`, 'v']));
    assert.ok(validateSendBody({ ...base, tags }).some((d) => d.field === 'tags'));
    assert.ok(validateSendBody({ ...base, tags: { rr_internal: 'x' } }).some((d) => /reserved/.test(d.message)));
    assert.ok(validateSendBody({ ...base, tags: { campaign: 'spring sale' } }).some((d) => d.field === 'tags.campaign'));
    assert.ok(validateSendBody({ ...base, tags: { 'café': 'x' } }).length > 0);
  });
  test('reserved headers are refused, case-insensitively, Service-* included', () => {
    for (const name of ['From', 'subject', 'DKIM-Signature', 'Service-Signature', 'content-type']) {
      assert.ok(validateSendBody({ ...base, headers: { [name]: 'x' } }).some((d) => /reserved/.test(d.message)), name);
    }
  });
  test('metadata: at most 50 keys of 40 characters, values of 500', () => {
    assert.ok(validateSendBody({ ...base, metadata: { ['k'.repeat(41)]: 'v' } }).length > 0);
    assert.ok(validateSendBody({ ...base, metadata: { k: 'v'.repeat(501) } }).length > 0);
  });
  test('Idempotency-Key: 1 to 128 printable ASCII characters, no space', () => {
    assert.ok(validIdempotencyKey('order-1234'));
    assert.ok(validIdempotencyKey('x'.repeat(128)));
    for (const bad of ['', 'x'.repeat(129), 'has space', 'naïve']) assert.equal(validIdempotencyKey(bad), false, bad);
  });
});
