// The inbox summary of a plain message read without mailparser (relay/inbox/quick-summary.ts) is the
// one mailparser's parse gives, byte for byte, and every message outside its narrow shape goes to
// mailparser: each message here, composed by the relay or written by hand, is summarised both ways.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generateKeyPairSync } from 'node:crypto';
import { signMessage } from '../../relay/delivery/dkim-sign.js';
import { buildOutboundMessage } from '../../relay/delivery/mime.js';
import { quickSummary } from '../../relay/inbox/quick-summary.js';
import { parseMessage, summarize } from '../../relay/inbox/read-message.js';

const envelope = { from: 'bounce+em_x@raven.example.test', to: ['user1@example.test'] };

// The relay signs every message of a domain with a key: its DKIM-Signature field is always folded.
const dkim = { domainName: 'example.test', keySelector: 'raven', privateKey: generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey };

async function composed(fields: { from?: string; to?: string[]; cc?: string[]; subject?: string; text?: string | null; html?: string | null; headers?: Record<string, string> }): Promise<Buffer> {
  const email = {
    id: 'em_01jabcdefghijklmnopqrstuvw',
    from_address: fields.from ?? 'Bench <sender@example.test>',
    to_json: JSON.stringify(fields.to ?? ['user1@example.test']),
    cc_json: JSON.stringify(fields.cc ?? []),
    reply_to: null,
    subject: fields.subject ?? 'Your receipt #123',
    text_body: fields.text === undefined ? 'Thanks for your order. '.repeat(38) : fields.text,
    html_body: fields.html ?? null,
    headers_json: JSON.stringify(fields.headers ?? {}),
  };
  return signMessage((await buildOutboundMessage(email, [{ address: 'user1@example.test', position: 0 }], new Date('2026-11-28T01:00:00Z'))).raw, dkim);
}

const crlf = (text: string) => Buffer.from(text.replace(/\r?\n/g, '\r\n'), 'utf8');

/** Summarised both ways: when the quick reading answers, it must be mailparser's. Returns whether it answered. */
async function same(raw: Buffer, label: string): Promise<boolean> {
  const quick = quickSummary(raw, envelope);
  const parsed = summarize(await parseMessage(raw), envelope);
  if (quick !== undefined) assert.deepEqual(quick, parsed, label);
  return quick !== undefined;
}

test("the relay's own plain messages are read quickly, exactly as mailparser reads them", async () => {
  const cases: Array<[string, Parameters<typeof composed>[0]]> = [
    ['the bench email', {}],
    ['accents in the body (quoted-printable)', { text: `Merci pour votre commande, Zoë. Ça arrive à 10 h. — 👋 ${'Thanks for your order. '.repeat(20)}` }],
    ['long lines and trailing spaces', { text: `${'word '.repeat(300)}   \n\tindented\r\nend =3D not an escape = ` }],
    ['a quoted display name with a comma', { from: '"Doe, Jane" <jane@example.test>' }],
    ['a bare address', { from: 'sender@example.test' }],
    ['two recipients', { to: ['Ada <ada@example.test>', 'bob@example.test'] }],
    ['a custom header', { headers: { 'X-Entity-Ref': 'abc' } }],
    ['an empty text', { text: '' }],
    ['only whitespace', { text: ' \n\n \t ' }],
    ['a long subject (folded)', { subject: 'A subject long enough to be folded over more than one line '.repeat(3) }],
    ['many recipients (folded)', { to: Array.from({ length: 8 }, (_, i) => `Recipient number ${i} <recipient${i}@example.test>`) }],
  ];
  for (const [label, fields] of cases) assert.equal(await same(await composed(fields), label), true, `${label}: read quickly`);
});

test('anything else goes to mailparser (and the answer stays the same)', async () => {
  const composedCases: Array<[string, Parameters<typeof composed>[0]]> = [
    ['a subject with accents (encoded words)', { subject: 'Reçu n° 123' }],
    ['a name with accents', { from: 'Zoë <zoe@example.test>' }],
    ['text and HTML (multipart)', { html: '<p>Hello</p>' }],
    ['HTML only', { text: null, html: '<p>Hello <b>there</b></p>' }],
    ['a literal encoded word in the subject', { subject: '=?utf-8?q?not_decoded?=' }],
  ];
  for (const [label, fields] of composedCases) assert.equal(await same(await composed(fields), label), false, `${label}: goes to mailparser`);

  const head = 'From: App <app@example.test>\nTo: ada@example.test\nSubject: Hi\nMIME-Version: 1.0\n';
  const byHand: Array<[string, Buffer]> = [
    ['LF line ends', Buffer.from(`${head}Content-Type: text/plain\n\nHello`)],
    ['no blank line', crlf(`${head}Content-Type: text/plain`)],
    ['no Content-Type', crlf(`${head}\nHello`)],
    ['format=flowed', crlf(`${head}Content-Type: text/plain; charset=utf-8; format=flowed\n\nHello \nthere`)],
    ['another charset', crlf(`${head}Content-Type: text/plain; charset=iso-8859-1\n\nHello`)],
    ['base64', crlf(`${head}Content-Type: text/plain\nContent-Transfer-Encoding: base64\n\nSGVsbG8=`)],
    ['an attachment', crlf(`${head}Content-Type: text/plain\nContent-Disposition: attachment; filename="a.txt"\n\nHello`)],
    ['two From fields', crlf(`${head}From: Other <other@example.test>\nContent-Type: text/plain\n\nHello`)],
    ['two Subject fields', crlf(`${head}Subject: Again\nContent-Type: text/plain\n\nHello`)],
    ['a group', crlf('From: App <app@example.test>\nTo: undisclosed-recipients:;\nContent-Type: text/plain\n\nHello')],
    ['an IDN domain', crlf('From: App <app@xn--bcher-kva.example>\nTo: ada@example.test\nContent-Type: text/plain\n\nHello')],
    ['8-bit in a header', crlf('From: Zoë <zoe@example.test>\nTo: ada@example.test\nContent-Type: text/plain\n\nHello')],
    ['a first line folded', crlf(' From: App <app@example.test>\nTo: ada@example.test\nContent-Type: text/plain\n\nHello')],
    ['8-bit in a folded line', crlf('From: App <app@example.test>\nTo: ada@example.test\nX-Note: a\n ü\nContent-Type: text/plain\n\nHello')],
  ];
  for (const [label, raw] of byHand) assert.equal(await same(raw, label), false, `${label}: goes to mailparser`);
});

test('hand-written plain messages that are read quickly match mailparser to the byte', async () => {
  const head = 'From: "App, Inc." <app@example.test> (the app)\nTo: Ada <ada@example.test>, bob@example.test\nSubject:   spaced   subject  \n';
  const cases: Array<[string, Buffer]> = [
    ['7bit', crlf(`${head}Content-Type: text/plain; charset=us-ascii\nContent-Transfer-Encoding: 7bit\n\nHello\n\nthere`)],
    ['8bit UTF-8', crlf(`${head}Content-Type: text/plain; charset="UTF-8"\nContent-Transfer-Encoding: 8bit\n\nZoë — ${'ü'.repeat(200)}`)],
    ['a byte-order mark', Buffer.concat([crlf(`${head}Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: 8bit\n\n`), Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('Hello')])],
    ['invalid UTF-8', Buffer.concat([crlf(`${head}Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: 8bit\n\nbad `), Buffer.from([0xc3, 0x28, 0xff, 0xe2, 0x82]), Buffer.from(' end')])],
    ['quoted-printable oddities', crlf(`${head}Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: Quoted-Printable\n\nsoft=\nbreak =ZZ =3d =C3=A9=\n= \ntrailing   \n=F0=9F=91=8B`)],
    ['a NUL in the body', crlf(`${head}Content-Type: text/plain\n\nbefore\u0000after`)],
    ['no Subject, no To', crlf('From: app@example.test\nContent-Type: text/plain\n\nHello')],
    ['an empty From', crlf('From: \nTo: ada@example.test\nContent-Type: TEXT/PLAIN\n\nHello')],
    ['a bare CR in the body', crlf(`${head}Content-Type: text/plain\n\n`).length > 0 ? Buffer.concat([crlf(`${head}Content-Type: text/plain\n\n`), Buffer.from('a\rb\r\n\r\nc')]) : Buffer.alloc(0)],
    ['folded fields', crlf('From: App\n <app@example.test>\nTo: Ada <ada@example.test>,  \n\t  bob@example.test\nSubject: one  \n  two\n \n\tthree\nContent-Type: text/plain;\n charset=utf-8\n\nHello')],
    ['angle brackets only', crlf('From: <app@example.test>\nTo: <ada@example.test>\nContent-Type: text/plain\n\nHello')],
  ];
  for (const [label, raw] of cases) assert.equal(await same(raw, label), true, `${label}: read quickly`);
});
