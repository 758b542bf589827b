// The sink reads a captured message's Subject and From before its 250 with firstHeaderValues
// (relay/mail/headers.ts), one pass without the other fields. It must give what parseHeaders and
// headerValue give, the reading every other part of the relay uses, for the headers a hostile
// sender writes too: folded and empty fields, repeated names, bare CR or LF line ends, a
// continuation line before any field, a field without a colon, a blank line ending the section.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeEncodedWords, firstHeaderValues, headerValue, parseHeaders } from '../../relay/mail/headers.js';

const CASES = [
  'Subject: Hello\r\nFrom: A <a@example.test>\r\n\r\nbody',
  'subject:  folded\r\n  twice\r\n\tand tabbed \r\nFROM:x\r\n\r\nSubject: in the body',
  'Subject: first\r\nSubject: second\r\nFrom: one\r\nfrom: two\r\n\r\n',
  ' leading continuation\r\nSubject: after\r\n\r\n',
  'no colon here\r\n folded into it\r\nFrom: kept\n\nSubject: body',
  'Subject: bare\rcr\r\nFrom: lf only\nX: y\r\r\nSubject: later\r\n\r\n',
  ': empty name\r\nSubject :spaced name\r\n\r\n',
  'Subject:\r\nFrom: \r\n\r\n',
  'X-Only: nothing wanted\r\n\r\nSubject: body\r\n',
  'Subject: no blank line at all\r\nFrom: end\r',
  'Subject: =?utf-8?q?caf=C3=A9?= \u0000 é\r\nFrom: =?utf-8?b?w6k=?= <e@example.test>\r\n\r\n',
  '',
];

test('firstHeaderValues gives what parseHeaders(raw, false) and headerValue give, field by field', () => {
  for (const text of CASES) {
    for (const raw of [Buffer.from(text, 'utf8'), Buffer.from(text, 'latin1')]) {
      const fields = parseHeaders(raw, false);
      assert.deepEqual(
        firstHeaderValues(raw, ['subject', 'from', 'x']),
        ['subject', 'from', 'x'].map((name) => headerValue(fields, name)),
        JSON.stringify(text),
      );
    }
  }
});

test('a value without an encoded word is returned as it is; one with encoded words is decoded', () => {
  for (const value of ['', 'plain', 'a =? b', '?= =?', 'x=?utf-8?q?', '\u0000 é']) assert.equal(decodeEncodedWords(value), value);
  assert.equal(decodeEncodedWords('=?utf-8?q?caf=C3=A9?= =?utf-8?b?w6k=?= x'), 'caféé x');
});
