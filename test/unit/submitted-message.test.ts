// A submitted message read as a send request (relay/domain/submitted-message.ts), what a repeat is
// compared by, and the message the worker delivers from it (relay/delivery/mime.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { submittedOutboundMessage } from '../../relay/delivery/mime.js';
import { readSubmission, submissionHash } from '../../relay/domain/submitted-message.js';

const raw = (lines: string[]) => Buffer.from(lines.join('\r\n'), 'utf8');

test('the envelope decides who receives it: To header -> to, Cc -> cc, anyone else -> bcc', () => {
  const read = readSubmission({
    raw: raw(['From: "Doe, Jane" <jane@ours.test>', 'To: Ada <ADA@ours.test>, nobody@ours.test', 'Cc: bob@ours.test', 'Subject: =?utf-8?B?R3LDvMOfZQ==?=', '', 'x']),
    envelopeTo: ['ada@ours.test', 'bob@ours.test', 'carol@ours.test'],
  });
  assert.ok(read.ok);
  const { request } = read.value;
  assert.equal(request.from.raw, '"Doe, Jane" <jane@ours.test>');
  assert.equal(request.from.name, 'Doe, Jane');
  assert.equal(request.subject, 'Grüße');
  assert.deepEqual(request.to.map((m) => m.raw), ['Ada <ada@ours.test>']);
  assert.deepEqual(request.cc.map((m) => m.address), ['bob@ours.test']);
  assert.deepEqual(request.bcc.map((m) => m.address), ['carol@ours.test']);
});

test('a display name with an encoded comma stays one mailbox (addresses are parsed before names are decoded)', () => {
  const read = readSubmission({ raw: raw(['From: =?utf-8?Q?Doe=2C_J=C3=BCrgen?= <j@ours.test>', 'To: b@ours.test', 'Subject: s', '', 'x']), envelopeTo: ['b@ours.test'] });
  assert.ok(read.ok, JSON.stringify(read));
  assert.equal(read.value.request.from.name, 'Doe, Jürgen');
  assert.equal(read.value.request.from.address, 'j@ours.test');
});

test('a repeat is compared without Date and Message-ID (folded lines included), with the envelope', () => {
  const message = (date: string, id: string) => raw(['From: a@ours.test', `Date: ${date}`, `Message-ID:`, ` <${id}@x>`, 'Subject: s', '', 'body']);
  const a = submissionHash({ raw: message('Mon, 1 Jan 2024', 'one'), envelopeTo: ['b@ours.test'] });
  assert.equal(submissionHash({ raw: message('Tue, 2 Jan 2024', 'two'), envelopeTo: ['B@ours.test'] }), a);
  assert.notEqual(submissionHash({ raw: message('Mon, 1 Jan 2024', 'one'), envelopeTo: ['c@ours.test'] }), a);
  assert.notEqual(submissionHash({ raw: raw(['From: a@ours.test', 'Subject: s', '', 'body!']), envelopeTo: ['b@ours.test'] }), a);
});

test('delivered as submitted: a Message-ID added when missing, Bcc header fields left out, the body untouched', () => {
  const email = { id: 'em_01jdq4zk5w9m2v3xg7h8tq1b6n', from_address: 'a@ours.test', to_json: '[]', cc_json: '[]', reply_to: null, subject: 's', text_body: null, html_body: null, headers_json: '{}' };
  const submitted = raw(['From: a@ours.test', 'Bcc: secret@ours.test,', ' other@ours.test', 'Subject: s', '', 'Bcc: in the body stays']);
  const out = submittedOutboundMessage({ ...email, submitted_raw: submitted }, [{ address: 'secret@ours.test', position: 0 }]);
  const text = out.raw.toString('utf8');
  assert.equal(out.messageId, `<${email.id}@ours.test>`);
  assert.match(text, new RegExp(`^Message-ID: <${email.id}@ours.test>\\r\\n`));
  const head = text.split('\r\n\r\n')[0]!;
  assert.ok(!/^bcc:/im.test(head) && !head.includes('other@'), 'no Bcc field (nor its continuation) in the header section');
  assert.ok(text.endsWith('\r\n\r\nBcc: in the body stays'));
  assert.equal(out.envelope.from, `bounce+${email.id}@raven.ours.test`);

  const kept = submittedOutboundMessage({ ...email, submitted_raw: raw(['Message-ID: <app-1@client.test>', 'From: a@ours.test', '', 'x']) }, []);
  assert.equal(kept.messageId, '<app-1@client.test>');
  assert.equal(kept.raw.toString('utf8'), 'Message-ID: <app-1@client.test>\r\nFrom: a@ours.test\r\n\r\nx');
});
