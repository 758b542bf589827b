// What `tag:` and `message-id:` compare (relay/inbox/search-terms.ts), and how the search box's
// terms are read (relay/inbox/search-query.ts): the indexed side and the typed side must meet.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseInboxSearch } from '../../relay/inbox/search-query.js';
import { MAX_TAGS_PER_MESSAGE, searchTermsOf, tagQueryTerm } from '../../relay/inbox/search-terms.js';

const head = (...lines: string[]) => Buffer.from(`${lines.join('\r\n')}\r\n\r\nbody\r\n`);

test('tags: the email tags, then every X-Tags item; name and name=value, lower-cased, spaces folded', () => {
  const terms = searchTermsOf(head('Subject: x', 'X-Tags: Tag  1, plan = Pro,,', 'x-tags: nightly'), { Signup: 'web' });
  assert.deepEqual(terms.tags.sort(), ['nightly', 'plan', 'plan=pro', 'signup', 'signup=web', 'tag 1']);
  assert.equal(terms.messageId, '');
});

test('Message-ID: without brackets, lower-cased; folded and encoded-word headers read', () => {
  assert.equal(searchTermsOf(head('Message-ID:', ' <Abc.1@Host.Test>'), null).messageId, 'abc.1@host.test');
  assert.equal(searchTermsOf(head('Message-Id: bare@host.test'), null).messageId, 'bare@host.test');
  assert.equal(searchTermsOf(head(`Message-ID: <${'a'.repeat(1000)}@x>`), null).messageId, '');
});

test('hostile X-Tags: a NUL is U+FFFD, at most MAX_TAGS_PER_MESSAGE tags, over-long ones skipped', () => {
  const many = Array.from({ length: 500 }, (_, i) => `t${i}`).join(',');
  assert.equal(searchTermsOf(head(`X-Tags: ${many}`), null).tags.length, MAX_TAGS_PER_MESSAGE);
  assert.deepEqual(searchTermsOf(head(`X-Tags: ${'a'.repeat(600)}, ok`), null).tags, ['ok']);
  assert.deepEqual(searchTermsOf(head('X-Tags: a\u0000b'), null).tags, ['a\ufffdb']);
});

test('the typed side: tag:, message-id:, negated and quoted; empty values are free text', () => {
  assert.equal(tagQueryTerm(' Plan = Pro '), 'plan=pro');
  assert.equal(tagQueryTerm('plan='), 'plan');
  const search = parseInboxSearch('tag:signup -tag:"Plan=Free" message-id:<A@B> -message-id:c@d tag: message-id:<>');
  assert.deepEqual(search.tags, ['signup']);
  assert.deepEqual(search.exclude.tags, ['plan=free']);
  assert.deepEqual(search.messageIds, ['a@b']);
  assert.deepEqual(search.exclude.messageIds, ['c@d']);
  assert.deepEqual(search.text, ['tag:', 'message-id:<>']);
});
