// Hostile input in headers and MIME: line breaks of every kind, NUL and other controls in every
// field that reaches a header are refused with the field named; input that is legitimately odd
// (encoded-word look-alikes, quotes, commas, emoji, long multibyte subjects) is accepted and the
// generated message, read back raw from the sink, is checked line by line and parsed again.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { simpleParser, type AddressObject } from 'mailparser';
import { decodeEncodedWords } from '../../relay/mail/headers.js';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';

let t: TestRelay;
before(async () => {
  t = await startTestRelay();
});
after(() => t.stop());

const rcpt = (local: string) => `${local}@${t.domain}`;

function expectFieldError(res: { status: number; body: any; text: string }, field: string) {
  assert.equal(res.status, 422, res.text);
  assert.equal(res.body.error.code, 'validation_error');
  const fields = res.body.error.details.map((d: any) => d.field);
  assert.ok(fields.includes(field), `expected a detail for ${field}, got ${JSON.stringify(fields)}`);
}

describe('line breaks and controls are refused wherever they would reach a header', () => {
  const hostile: Record<string, string> = {
    CRLF: '\r\nBcc: victim@evil.test',
    'bare CR': '\rBcc: victim@evil.test',
    'bare LF': '\nBcc: victim@evil.test',
    'U+2028': '\u2028x',
    'U+2029': '\u2029x',
    'NEL U+0085': '\u0085x',
    NUL: '\u0000x',
  };
  // Other controls: refused in addresses, names and header values; a subject may carry them
  // (CONTRACT section 2 refuses only line breaks and NUL there), and they are encoded (below).
  const controls: Record<string, string> = { ESC: '\u001bx', DEL: '\u007fx', BS: '\u0008x' };
  const places: Array<[string, (s: string) => Record<string, unknown>, string]> = [
    ['subject', (s) => ({ subject: `Hi${s}` }), 'subject'],
    ['from display name', (s) => ({ from: `"Raven${s}" <sender@${t.domain}>` }), 'from'],
    ['to display name', (s) => ({ to: `Bob${s} <${rcpt('bob')}>` }), 'to'],
    ['cc address', (s) => ({ cc: [`carol${s}@${t.domain}`] }), 'cc[0]'],
    ['reply_to', (s) => ({ reply_to: `Help${s} <help@${t.domain}>` }), 'reply_to'],
    ['custom header value', (s) => ({ headers: { 'X-Order': `42${s}` } }), 'headers.X-Order'],
  ];
  for (const [place, fields, field] of places) {
    const cases = place === 'subject' ? hostile : { ...hostile, ...controls };
    for (const [what, s] of Object.entries(cases)) {
      test(`${what} in the ${place}`, async () => expectFieldError(await t.send(fields(s)), field));
    }
  }

  test('custom header names with a colon, a space, non-ASCII, a control, nothing at all, or too long for a line', async () => {
    for (const name of ['X-A:B', 'X A', 'X-Ünï', 'X-\u0001', '', `X-${'n'.repeat(995)}`]) {
      expectFieldError(await t.send({ headers: { [name]: 'v' } }), `headers.${name}`);
    }
  });

  test('addresses past RFC 5321: a 65-octet local part, a 64-octet label, a 256-octet domain, a quoted local part', async () => {
    const label = 'a'.repeat(63);
    const longDomain = `${label}.${label}.${label}.${label}.test`; // 4*64 + 4 = 260 octets
    for (const to of [`${'a'.repeat(65)}@${t.domain}`, `x@${'b'.repeat(64)}.test`, `x@${longDomain}`, `"a\r\nb"@${t.domain}`, `"a b"@${t.domain}`]) {
      expectFieldError(await t.send({ to }), 'to');
    }
  });

  test('a mailbox over 998 characters (a long display name) is refused', async () => {
    expectFieldError(await t.send({ to: `${'N'.repeat(990)} <${rcpt('long')}>` }), 'to');
  });

  test('nothing refused was stored: the relay still answers and lists only what it accepted', async () => {
    const ok = await t.send({ subject: 'after the storm' });
    assert.equal(ok.status, 202, ok.text);
    const list = await t.api('GET', '/v1/emails?limit=100');
    assert.equal(list.status, 200, list.text);
    assert.ok(list.body.emails.length > 0);
    assert.ok(list.body.emails.every((e: any) => !/[\r\n\u2028\u2029\u0085\u0000]/.test(e.subject)));
  });
});

describe('what neither backend can store, in any field an email is made of (issue 20)', () => {
  const fields = (s: string): Array<[Record<string, unknown>, string]> => [
    [{ text: `body${s}` }, 'text'],
    [{ text: undefined, html: `<p>${s}</p>` }, 'html'],
    [{ subject: `Hi${s}` }, 'subject'],
    [{ to: [rcpt('a'), `b${s}@${t.domain}`] }, 'to[1]'],
    [{ bcc: `Name${s} <${rcpt('b')}>` }, 'bcc'],
    [{ headers: { 'X-Order': `4${s}2` } }, 'headers.X-Order'],
    [{ tags: { plan: `pro${s}` } }, 'tags.plan'],
    [{ tags: [{ name: 'plan', value: `p${s}` }] }, 'tags.plan'],
    [{ metadata: { user: `u${s}` } }, 'metadata.user'],
    [{ metadata: { [`us${s}er`]: 'u' } }, `metadata.us${s}er`],
  ];

  test('regression: a NUL in the text, html, subject, an address, a header, a tag or metadata is a 422 naming the field (PostgreSQL answered 500)', async () => {
    for (const [given, field] of fields('\u0000')) expectFieldError(await t.send(given), field);
    // Nothing was stored: the same Idempotency-Key with a corrected body is accepted.
    const ok = await t.send({ text: 'body' }, { idempotencyKey: 'after-nul' });
    assert.equal(ok.status, 202, ok.text);
  });

  test('an unpaired surrogate in any of those fields is not JSON text: 400 invalid_request', async () => {
    for (const [given] of fields('\ud800')) {
      const body = JSON.stringify({ from: `sender@${t.domain}`, to: rcpt('u'), subject: 's', text: 't', ...given });
      assert.match(body, /\\ud800/, 'JSON.stringify escapes the unpaired surrogate');
      const res = await t.api('POST', '/v1/emails', { body });
      assert.equal(res.status, 400, `${body}: ${res.text}`);
      assert.equal(res.body.error.code, 'invalid_request');
    }
  });

  test('too long for its rule: a 999-character subject, a 501-character metadata value, a 41-character key', async () => {
    expectFieldError(await t.send({ subject: 's'.repeat(999) }), 'subject');
    expectFieldError(await t.send({ metadata: { k: 'v'.repeat(501) } }), 'metadata.k');
    expectFieldError(await t.send({ metadata: { ['k'.repeat(41)]: 'v' } }), `metadata.${'k'.repeat(41)}`);
  });
});

/** The raw message the sink captured for an email, after it was delivered. */
async function deliveredRaw(fields: Record<string, unknown>): Promise<Buffer> {
  const to = (fields.to as string | undefined) ?? rcpt(`mime${Math.random().toString(36).slice(2, 10)}`);
  const res = await t.send({ ...fields, to });
  assert.equal(res.status, 202, res.text);
  const detail = await t.waitForFinal(res.body.id);
  assert.equal(detail.status, 'delivered');
  const address = /<([^>]+)>\s*$/.exec(to)?.[1] ?? to;
  const list = await t.admin('GET', `/admin/v1/messages?to=${encodeURIComponent(address)}`);
  assert.equal(list.body.messages.length, 1, list.text);
  const raw = await fetch(`${t.url}/admin/v1/messages/${list.body.messages[0].id}/raw`, { headers: { authorization: `Bearer ${t.adminToken}` } });
  assert.equal(raw.status, 200);
  return Buffer.from(await raw.arrayBuffer());
}

/** RFC 5322 on the wire: CRLF only, no NUL, lines within 998 octets, a 7-bit header section. */
function assertWellFormed(raw: Buffer): string[] {
  assert.equal(raw.indexOf(0), -1, 'no NUL');
  const text = raw.toString('latin1');
  assert.doesNotMatch(text, /\r(?!\n)/, 'no bare CR');
  assert.doesNotMatch(text, /(?<!\r)\n/, 'no bare LF');
  const lines = text.split('\r\n');
  for (const line of lines) assert.ok(line.length <= 998, `a line of ${line.length} octets`);
  const headerEnd = lines.indexOf('');
  const head = lines.slice(0, headerEnd);
  for (const line of head) assert.match(line, /^[\x20-\x7e\t]*$/, `8-bit or control in a header line: ${JSON.stringify(line)}`);
  // Header names: every unfolded line starts with a name and a colon.
  return head.filter((l) => !/^[ \t]/.test(l)).map((l) => l.slice(0, l.indexOf(':')).toLowerCase());
}

describe('what is accepted comes out as well-formed MIME that decodes to exactly what was sent', () => {
  test('an encoded-word look-alike that would decode to CRLF stays literal text, in the subject and a display name', async () => {
    const trap = '=?utf-8?b?YQ0KQmNjOiB2aWN0aW1AZXZpbC50ZXN0?='; // "a\r\nBcc: victim@evil.test"
    const to = `${trap} <${rcpt('trap')}>`;
    const raw = await deliveredRaw({ subject: trap, to });
    const names = assertWellFormed(raw);
    assert.ok(!names.includes('bcc'), 'no Bcc header');
    assert.equal(names.filter((n) => n === 'to').length, 1);
    assert.equal(names.filter((n) => n === 'subject').length, 1);
    const parsed = await simpleParser(raw);
    assert.equal(parsed.subject, trap, 'the subject decodes to the literal text sent');
    const toValue = (parsed.to as AddressObject).value[0]!;
    assert.equal(toValue.name, trap);
    assert.equal(toValue.address, rcpt('trap'));
    assert.equal(parsed.bcc, undefined);
  });

  test('a 998-character multibyte subject is folded into short encoded words and decodes back exactly', async () => {
    const subject = Array.from('Ω😀é'.repeat(333)).slice(0, 998).join(''); // 998 code points
    const raw = await deliveredRaw({ subject });
    assertWellFormed(raw);
    assert.equal((await simpleParser(raw)).subject, subject);
  });

  test('display names with quotes, commas, semicolons, a backslash and emoji round-trip', async () => {
    const name = 'O\'Brien, "Bob"; Team \\ 🚀';
    const escaped = name.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
    const to = `"${escaped}" <${rcpt('obrien')}>`;
    const raw = await deliveredRaw({ to, reply_to: `"${escaped}" <reply@${t.domain}>` });
    assertWellFormed(raw);
    const parsed = await simpleParser(raw);
    const toValue = (parsed.to as AddressObject).value;
    assert.equal(toValue.length, 1, 'one address, not split at the comma or semicolon');
    assert.equal(toValue[0]!.address, rcpt('obrien'));
    assert.equal(toValue[0]!.name, name, 'the escapes stand for the characters themselves');
    assert.equal(parsed.replyTo?.value[0]?.address, `reply@${t.domain}`);
  });

  test('a display name that reads as more addresses to a looser parser adds no recipient to the headers (bug: it did)', async () => {
    for (const [label, name] of [
      ['list', 'x@evil.test, Mallory'],
      ['group', 'G: x@evil.test; Carol'],
      ['semicolon', 'a@evil.test; Carol'],
    ] as const) {
      const to = `"${name}" <${rcpt(`inj-${label}`)}>`;
      const raw = await deliveredRaw({ to, cc: [`${name} <${rcpt(`cc-${label}`)}>`], from: `${name} <sender@${t.domain}>` });
      assertWellFormed(raw);
      const parsed = await simpleParser(raw);
      for (const [field, expected] of [
        [parsed.to, rcpt(`inj-${label}`)],
        [parsed.cc, rcpt(`cc-${label}`)],
        [parsed.from, `sender@${t.domain}`],
      ] as const) {
        const list = (field as AddressObject).value;
        assert.deepEqual(list.map((m) => m.address), [expected], `${label}: ${JSON.stringify(list)}`);
        assert.equal(list[0]!.name, name);
      }
      assert.doesNotMatch(raw.toString('latin1').split('\r\n\r\n')[0]!, /evil\.test>/);
    }
  });

  test('custom headers with non-ASCII values are encoded; names keep their case and cannot smuggle a second header', async () => {
    const lookAlike = '=?utf-8?q?a=0D=0ABcc:_victim@evil.test?=';
    const raw = await deliveredRaw({ headers: { 'X-Note': 'café ☕ ok', 'X-Trap': 'a: b', 'X-Look': lookAlike } });
    const names = assertWellFormed(raw);
    assert.equal(names.filter((n) => n === 'x-note').length, 1);
    assert.ok(!names.includes('a'));
    const parsed = await simpleParser(raw);
    assert.equal(decodeEncodedWords(String(parsed.headers.get('x-note'))), 'café ☕ ok');
    assert.equal(parsed.headers.get('x-trap'), 'a: b');
    assert.equal(decodeEncodedWords(String(parsed.headers.get('x-look'))), lookAlike, 'an encoded-word look-alike reads back literally');
  });

  test('controls a subject may carry (ESC, DEL, BS, TAB) are encoded, never raw in the header, and decode back', async () => {
    const subject = 'bell\u001b[31m red\u007f\u0008\tend';
    const raw = await deliveredRaw({ subject });
    assertWellFormed(raw);
    assert.equal((await simpleParser(raw)).subject, subject);
  });

  test('a text body with lone CR, lone LF and a line of dots is normalised on the wire, not smuggled', async () => {
    const raw = await deliveredRaw({ text: 'one\rtwo\nthree\r\n.\r\n..\r\nMAIL FROM:<x@evil.test>\r\n' + 'z'.repeat(2000) });
    assertWellFormed(raw);
    const parsed = await simpleParser(raw);
    assert.match(parsed.text ?? '', /MAIL FROM:<x@evil\.test>/, 'the SMTP look-alike stays body text');
    assert.match(parsed.text ?? '', /z{2000}/, 'a 2000-character line is wrapped on the wire and rejoined');
  });
});
