// What neither backend can hold (relay/domain/storable-text.ts): found wherever it sits in a JSON
// value and named as the field rules name fields; replaced in text the relay keeps from outside.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isStorableText, storableText, unstorableFields } from '../../relay/domain/storable-text.js';
import { QueryParams } from '../../relay/domain/query-params.js';

test('NUL and unpaired surrogates (either half, at either end) cannot be stored; a surrogate pair can', () => {
  for (const text of ['\u0000', 'a\u0000', '\ud800', 'a\ud800', '\udc00a', '\udc00\ud800', 'x\ud83d']) assert.equal(isStorableText(text), false, JSON.stringify(text));
  for (const text of ['', 'plain', '\u{1F600}', 'é\u0001\u007f\ufffd']) assert.equal(isStorableText(text), true, JSON.stringify(text));
});

test('every unstorable string of a JSON value is named: fields, array items, nested keys, and keys themselves', () => {
  const details = unstorableFields({
    subject: 'a\u0000',
    to: ['ok@x.test', 'b\ud800@x.test'],
    headers: { 'X-A': 'fine', 'X-B': '\u0000' },
    metadata: { 'k\u0000': 'v' },
    tags: [{ name: 'n', value: '\udc00' }],
    count: 3,
    nothing: null,
  });
  assert.deepEqual(
    details.map((d) => d.field),
    ['subject', 'to[1]', 'headers.X-B', 'metadata.k\u0000', 'tags[0].value'],
  );
  assert.deepEqual(unstorableFields('\u0000'), [{ field: 'body', message: 'must not contain NUL (U+0000)' }]);
  assert.deepEqual(unstorableFields({ fine: ['a', { b: 'c' }] }), []);
});

test('text kept from outside has each NUL and unpaired surrogate replaced by U+FFFD, pairs kept', () => {
  assert.equal(storableText('a\u0000b\ud800c\u{1F600}\udc00'), 'a\ufffdb\ufffdc\u{1F600}\ufffd');
  assert.equal(storableText(null), null);
});

test('a list query: a filter that cannot be stored matches nothing; other parameters keep their rules', () => {
  const read = (qs: string) => {
    const query = new QueryParams(new URLSearchParams(qs));
    const to = query.filter('to');
    const limit = query.integer('limit', { min: 1, max: 100, fallback: 50 });
    return { to, limit, ...query.finish() };
  };
  assert.deepEqual(read('to=a%00b'), { to: 'a\u0000b', limit: 50, matchesNothing: true });
  assert.deepEqual(read('to=a@b.test&limit=7'), { to: 'a@b.test', limit: 7, matchesNothing: false });
  for (const qs of ['limit=%00', 'limit=0', 'limit=101', 'limit=1000', 'to=a&to=b']) assert.throws(() => read(qs), { code: 'validation_error' }, qs);
});
