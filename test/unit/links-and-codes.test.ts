// Links and one-time codes of captured mail (CONTRACT section 10), on real-looking messages: the
// raw MIME goes through the same parser as the relay's (encoded parts included).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { extractCodes, extractLinks } from '../../relay/inbox/links-and-codes.js';
import { parseMessage } from '../../relay/inbox/read-message.js';

async function read(raw: string) {
  const parsed = await parseMessage(Buffer.from(raw.replace(/\r?\n/g, '\r\n')));
  const html = typeof parsed.html === 'string' && parsed.html !== '' ? parsed.html : null;
  const text = parsed.text || null;
  return { links: extractLinks(html, text), codes: extractCodes(html, text) };
}

const alternative = (text: string, html: string, headers = '') => `From: App <no-reply@app.test>
To: ada@example.test
Subject: Test
MIME-Version: 1.0
${headers}Content-Type: multipart/alternative; boundary="b1"

--b1
Content-Type: text/plain; charset=utf-8

${text}
--b1
Content-Type: text/html; charset=utf-8

${html}
--b1--
`;

describe('one-time codes', () => {
  test('a sign-in code in the text and the HTML', async () => {
    const { codes } = await read(
      alternative(
        'Your verification code is 482913. It expires in 10 minutes.\n\nIf you did not try to sign in on 25/11/2026 at 10:30, ignore this email.',
        '<p>Your verification code is <strong>482913</strong>.</p>',
      ),
    );
    assert.deepEqual(codes, ['482913']);
  });

  test('a code alone on the line after "Your code:", and grouped digits', async () => {
    const { codes } = await read(alternative('Hi Ada,\n\nYour login code:\n\n  739 204\n\nThanks,\nThe team', '<p>unused</p>'));
    assert.deepEqual(codes, ['739204']);
  });

  test('a 2FA message with an alphanumeric code', async () => {
    const { codes } = await read(alternative('Two-factor authentication: enter K7Q2XW to finish signing in.', '<p>x</p>'));
    assert.deepEqual(codes, ['K7Q2XW']);
  });

  test('a receipt: prices, dates, an order number and a phone number are not codes', async () => {
    const receipt = [
      'Thanks for your order #48291034 placed on 2026-11-25.',
      'Subtotal: $1,234.50',
      'Tax: 19.99 EUR',
      'Total: €1254.49 (20% off)',
      'Delivery expected 28/11/2026 between 10:00 and 12:00.',
      'Security questions? Call 1-800-555-0199.',
      'Invoice 2026 for customer 7731 in your account.',
    ].join('\n');
    const { codes } = await read(alternative(receipt, `<p>${receipt.replace(/\n/g, '<br>')}</p>`));
    assert.deepEqual(codes, []);
  });

  test('an HTML-only message, quoted-printable', async () => {
    const raw = `From: App <no-reply@app.test>
To: ada@example.test
Subject: Sign in
MIME-Version: 1.0
Content-Type: text/html; charset=utf-8
Content-Transfer-Encoding: quoted-printable

<html><head><style>.code { font-size: 20px }</style></head><body><table><tr><td>Use this one-ti=
me passcode to sign in:</td></tr><tr><td class=3D"code">510 277</td></tr></table>=
<a href=3D"https://app.test/signin?token=3Dabc&amp;next=3D%2F">Or sign in with one click</a></body></html>
`;
    const { codes, links } = await read(raw);
    assert.deepEqual(codes, ['510277']);
    assert.deepEqual(links, [{ url: 'https://app.test/signin?token=abc&next=%2F', text: 'Or sign in with one click' }]);
  });

  test('a text-only message, base64', async () => {
    const body = Buffer.from('Bonjour Ada,\n\nVotre code de vérification : 90817263\n\nhttps://app.test/fr/verify?c=90817263.\n').toString('base64');
    const raw = `From: App <no-reply@app.test>
To: ada@example.test
Subject: =?utf-8?q?Code_de_v=C3=A9rification?=
MIME-Version: 1.0
Content-Type: text/plain; charset=utf-8
Content-Transfer-Encoding: base64

${body.replace(/(.{76})/g, '$1\n')}
`;
    const { codes, links } = await read(raw);
    assert.deepEqual(codes, ['90817263']);
    assert.deepEqual(links, [{ url: 'https://app.test/fr/verify?c=90817263', text: 'https://app.test/fr/verify?c=90817263' }]);
  });

  test('a code only the HTML part shows is found too, after those of the text part', async () => {
    const { codes } = await read(alternative('Hi there, your PIN is 2468.', '<p>Your sign-in code is <b>604112</b>.</p>'));
    assert.deepEqual(codes, ['2468', '604112']);
  });

  test('no code in an ordinary message that mentions none', async () => {
    const { codes } = await read(alternative('Meeting moved to room 4021 on floor 12. See you at 15:30.', '<p>x</p>'));
    assert.deepEqual(codes, []);
  });
});

describe('links', () => {
  test('HTML anchors first with their text, then the text part\'s URLs not already listed, each once; http(s) only', async () => {
    const { links } = await read(
      alternative(
        'Confirm: https://app.test/confirm?t=1 (or paste it).\nDocs: https://docs.app.test/start.\nhttps://app.test/confirm?t=1',
        `<p>Hello <b>Ada</b>,</p>
<p><a class="btn" href="https://app.test/confirm?t=1">Confirm <em>your</em>
   address</a></p>
<p><a href='mailto:help@app.test'>Write to us</a> <a href="javascript:alert(1)">x</a> <a href="/relative">rel</a>
<a href=http://tracking.app.test/o?id=9>Unsubscribe &amp; more</a>
<a href="https://app.test/confirm?t=1">Again</a></p>`,
      ),
    );
    assert.deepEqual(links, [
      { url: 'https://app.test/confirm?t=1', text: 'Confirm your address' },
      { url: 'http://tracking.app.test/o?id=9', text: 'Unsubscribe & more' },
      { url: 'https://docs.app.test/start', text: 'https://docs.app.test/start' },
    ]);
  });

  test('a URL with parentheses keeps its closing one; sentence punctuation goes', () => {
    assert.deepEqual(extractLinks(null, 'See https://en.wikipedia.org/wiki/Raven_(bird), or https://app.test/a.'), [
      { url: 'https://en.wikipedia.org/wiki/Raven_(bird)', text: 'https://en.wikipedia.org/wiki/Raven_(bird)' },
      { url: 'https://app.test/a', text: 'https://app.test/a' },
    ]);
  });
});
