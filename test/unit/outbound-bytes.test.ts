// The delivery's message bytes without nodemailer's streams (issue 24): a composed tree written
// out in one pass (relay/delivery/mime-bytes.ts), the common email written without MailComposer
// (relay/delivery/mime-plain.ts) and the DKIM signature computed in one pass
// (relay/delivery/dkim-sign.ts) give exactly what nodemailer's streaming build() and DKIM signer
// give, for every shape of message the relay composes or is submitted.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { describe, test } from 'node:test';
import DKIM from 'nodemailer/lib/dkim';
import MailComposer from 'nodemailer/lib/mail-composer';
import { signMessage } from '../../relay/delivery/dkim-sign.js';
import { mimeBytes } from '../../relay/delivery/mime-bytes.js';
import { plainMessage, type PlainFields, type PlainMailbox } from '../../relay/delivery/mime-plain.js';

const long = 'A line longer than seventy-six characters, which 7bit may not carry as it is, so it is encoded. '.repeat(3);
const texts: Array<string | undefined> = [
  undefined,
  'Thanks for your order. '.repeat(38),
  'short',
  long,
  'Grüße aus Köln – ünïcödé',
  'Ελληνικά κείμενα και 日本語のテキスト ばかり'.repeat(5),
  'lone LF\nline endings\n\nand a blank line\n',
  'CRLF\r\nendings\r\n',
  'trailing spaces   \nand tabs\t\t\nat the end   ',
  'ends with a CR\r',
  `=?utf-8?b?SGk=?= looks encoded\n${'x'.repeat(200)}`,
  '',
];
const htmls: Array<string | undefined> = [undefined, '<p>Hello <b>there</b></p>', `<p>${long}</p>\n<p>Grüße</p>`, ''];

function composer(i: number, text: string | undefined, html: string | undefined) {
  return new MailComposer({
    from: { name: i % 2 ? 'Bench Sender' : '', address: 'sender@example.test' },
    to: [{ name: 'Ünïcode Name', address: 'user1@example.test' }, { name: '', address: 'user2@example.test' }],
    cc: i % 3 === 0 ? [{ name: 'C C', address: 'cc@example.test' }] : undefined,
    replyTo: i % 4 === 0 ? { name: '', address: 'reply@example.test' } : undefined,
    subject: i % 2 ? `Your receipt #${i}` : `Grüße #${i} =?utf-8?q?x?= ${'long subject '.repeat(10)}`,
    date: new Date(Date.UTC(2026, 0, 1, 0, 0, i)),
    messageId: `<em_${i}@example.test>`,
    headers: i % 2 ? { 'X-Custom': `value ${i}`, 'List-Unsubscribe': '<mailto:u@example.test>' } : {},
    text: text || undefined,
    html: html || undefined,
    newline: 'windows',
  });
}

// Pools the written-directly cases are drawn from: what the relay composes most, and what lies
// just inside and just outside the direct path's scope (which MailComposer must then compose).
const names = ['', 'Bench', 'Bench Sender', 'snake_case 42', 'J. Doe', "O'Brien, Pat", 'say "hi"', 'back\\slash', 'Ünïcode Name',
  '日本語の名前', 'Grüße aus Köln Grüße aus Köln Grüße aus Köln Grüße aus Köln', 'x'.repeat(90), 'tab\there', 'ctrl\u0001char', ' padded '];
const addresses = ['user1@example.test', 'First.Last+tag@sub.example.test', 'a_b-c@ex-ample.test', 'x@xn--jgeva-dua.ee',
  'UPPER@example.test', 'user@Example.Test', 'user@jõgeva.ee', 'üser@example.test', 'a..b@example.test', '"quoted local"@example.test'];
const subjects = ['', '   ', 'Your receipt #1', 'Grüße aus Köln', 'Ελληνικά και 日本語 '.repeat(6), `long ${'subject words '.repeat(12)}`,
  `unbroken${'x'.repeat(120)}`, '=?utf-8?b?SGk=?= looks encoded', 'tab\there', 'ctrl\u0001char\u007f', 'line\nbreak', 'CR\rand CRLF\r\nmix',
  'quote " and (comment) <angle>', 'mixed ascii with one é in a long enough subject line to fold somewhere past here'];
const bodies = [...texts.filter((t): t is string => t !== undefined), '<p>Hello <b>there</b></p>', `<p>${long}</p>\n<p>Grüße</p>`,
  'x'.repeat(76), 'x'.repeat(77), `${'y'.repeat(76)}\r\n${'z'.repeat(76)}`, 'mixed\r\nCRLF\nLF\rCR\n\rLFCR', '   ', '\t', 'ctrl\u0001 in body',
  'line\n'.repeat(3000), 'a '.repeat(40000), '€'.repeat(500)];

function rng(seed: number) {
  return () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
}

function directCase(random: () => number, i: number): PlainFields {
  const pick = <T>(list: T[]): T => list[Math.floor(random() * list.length)]!;
  // Mostly in scope (ASCII addresses), sometimes not.
  const mailbox = (): PlainMailbox => ({ name: pick(names), address: random() < 0.85 ? pick(addresses.slice(0, 4)) : pick(addresses) });
  const list = (max: number) => Array.from({ length: 1 + Math.floor(random() * max) }, mailbox);
  const body = pick(bodies);
  const which = random();
  return {
    from: mailbox(),
    to: random() < 0.1 ? list(40) : list(3),
    cc: random() < 0.3 ? list(3) : undefined,
    replyTo: random() < 0.3 ? mailbox() : undefined,
    subject: pick(subjects),
    date: new Date(Date.UTC(2026, Math.floor(random() * 12), 1 + Math.floor(random() * 28), Math.floor(random() * 24), Math.floor(random() * 60), i % 60)),
    messageId: `<em_${i.toString(36)}abcdefghij@example.test>`,
    headers: random() < 0.1 ? { 'X-Custom': `value ${i}` } : {},
    text: which < 0.45 ? body : which < 0.55 ? pick(bodies) : undefined,
    html: which >= 0.45 ? body : undefined,
  };
}

async function nodemailerSigned(raw: Buffer, key: ReturnType<typeof generateKeyPairSync>['privateKey']): Promise<Buffer> {
  const signer = new DKIM({ domainName: 'example.test', keySelector: 'raven', privateKey: key as unknown as string });
  const chunks: Buffer[] = [];
  for await (const chunk of signer.sign(raw)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe('outbound message bytes', () => {
  test('a composed tree written in one pass is what its streaming build gives', async () => {
    let i = 0;
    const seen = new Set<string>();
    for (const text of texts) {
      for (const html of htmls) {
        const tree = composer(i++, text, html).compile();
        const once = mimeBytes(tree);
        assert.ok(once, `written in one pass (${i})`);
        assert.equal(once.toString('latin1'), (await tree.build()).toString('latin1'), `message ${i}`);
        for (const m of once.toString('latin1').matchAll(/^Content-(?:Transfer-Encoding: (\S+)|Type: (multipart)\/)/gm)) seen.add(m[1] ?? m[2]!);
      }
    }
    assert.deepEqual([...seen].sort(), ['7bit', 'base64', 'multipart', 'quoted-printable'], 'every encoding and multipart covered');
  });

  test('what one pass does not cover is left to the streaming build', async () => {
    const tree = new MailComposer({ from: 'a@example.test', to: 'b@example.test', raw: 'Subject: x\r\n\r\nraw\r\n' }).compile();
    assert.equal(mimeBytes(tree), undefined);
  });

  test('the common email written directly is what MailComposer and its streaming build give', async () => {
    const random = rng(24);
    // The relay's most common email (the bench's receipt), then hand-written edges, then generated ones.
    const cases: PlainFields[] = [
      { from: { name: 'Bench', address: 'sender@example.test' }, to: [{ name: '', address: 'user1@example.test' }], subject: 'Your receipt #1',
        date: new Date(Date.UTC(2026, 10, 28, 8, 5, 9)), messageId: '<em_01abc@example.test>', headers: {}, text: 'Thanks for your order. '.repeat(38) },
      ...bodies.flatMap((body, i) => [
        { subject: subjects[i % subjects.length]!, date: new Date(Date.UTC(2026, 0, 1 + i)), messageId: `<em_t${i}@example.test>`, headers: {}, text: body,
          from: { name: names[i % names.length]!, address: 'sender@example.test' }, to: [{ name: '', address: addresses[i % 4]! }] },
        { subject: subjects[(i + 3) % subjects.length]!, date: new Date(Date.UTC(2026, 5, 9, 9, 9, 9)), messageId: `<em_h${i}@example.test>`, headers: {}, html: body,
          from: { name: '', address: 'sender@example.test' }, to: [{ name: names[(i + 5) % names.length]!, address: 'user1@example.test' }],
          cc: [{ name: 'C C', address: 'cc@example.test' }], replyTo: { name: names[(i + 7) % names.length]!, address: 'reply@example.test' } },
      ]),
      ...Array.from({ length: 600 }, (_, i) => directCase(random, i)),
    ];
    let written = 0;
    for (const [i, fields] of cases.entries()) {
      const direct = plainMessage(structuredClone(fields));
      if (!direct) continue;
      written++;
      const composed = await new MailComposer({ ...structuredClone(fields), newline: 'windows' }).compile().build();
      assert.equal(direct.toString('latin1'), composed.toString('latin1'), `case ${i}: ${JSON.stringify(fields).slice(0, 300)}`);
    }
    assert.ok(plainMessage(cases[0]!), "the bench's receipt is written directly");
    assert.ok(written >= 300 && written < cases.length, `written directly: ${written} of ${cases.length}`);
  });

  test("the DKIM signature computed in one pass is nodemailer's signer's, byte for byte", async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const composed = await Promise.all(texts.slice(0, 6).map((text, i) => composer(i, text, htmls[i % htmls.length]).compile().build()));
    const submitted = [
      // Duplicate and folded fields (the bottom-most is signed), odd spacing around names and values.
      'From: a@example.test\r\nSubject:  first\r\nTo: b@example.test,\r\n\t c@example.test\r\nSubject: \t second  \r\n  folded\r\n \tFrom : x@example.test\r\n\r\nbody\r\n',
      // Lone CR and LF, whitespace runs, trailing empty lines.
      'From: a@example.test\nSubject: lf only\n\nline one  \t end\n\n\nlone\rcr\r\n \t \r\n\r\n\r\n',
      // No body; a body of empty lines only; headers only, no empty line.
      'From: a@example.test\r\nSubject: no body\r\n\r\n',
      'From: a@example.test\r\n\r\n\r\n\r\n',
      'From: a@example.test\r\nSubject: headers only',
      // Bodies already canonical but for their ends (hashed as they are): no final line break, a
      // leading space, trailing empty lines; and one that ends with a space, which is not.
      'From: a@example.test\r\n\r\n leading space\r\n\r\nno final line break',
      'From: a@example.test\r\n\r\ncanonical\r\n\r\nlines\r\n\r\n\r\n',
      'From: a@example.test\r\n\r\nends with a space ',
      // A field without a colon, an NBSP before a name, 8-bit bytes.
      'From: a@example.test\r\nnot a field\r\n\u00a0Subject: nbsp\r\nX-8bit: caf\u00e9\r\n\r\ncaf\u00e9  \r\nend',
    ].map((s) => Buffer.from(s, 'latin1'));
    for (const raw of [...composed, ...submitted]) {
      const ours = signMessage(raw, { domainName: 'example.test', keySelector: 'raven', privateKey });
      assert.equal(ours.toString('latin1'), (await nodemailerSigned(raw, privateKey)).toString('latin1'));
    }
  });
});
