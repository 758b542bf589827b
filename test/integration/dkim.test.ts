// DKIM: a message from a connected domain carries a signature that verifies, independently of
// the signer, against the public key published in the domain's DNS records (RFC 6376, relaxed).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createPublicKey, verify } from 'node:crypto';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';

let t: TestRelay;
before(async () => {
  t = await startTestRelay();
});
after(async () => {
  await t.stop();
});

function splitMessage(raw: string): { headers: Array<[string, string]>; body: string } {
  const at = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, at);
  const headers: Array<[string, string]> = [];
  for (const line of head.split('\r\n')) {
    if (/^[ \t]/.test(line) && headers.length > 0) headers[headers.length - 1]![1] += `\r\n${line}`;
    else {
      const colon = line.indexOf(':');
      headers.push([line.slice(0, colon), line.slice(colon + 1)]);
    }
  }
  return { headers, body: raw.slice(at + 4) };
}

const relaxedHeader = (name: string, value: string) =>
  `${name.toLowerCase().trim()}:${value.replace(/\r\n/g, '').replace(/[ \t]+/g, ' ').trim()}`;

function relaxedBody(body: string): string {
  const lines = body.split('\r\n').map((l) => l.replace(/[ \t]+/g, ' ').replace(/ $/, ''));
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines.length === 0 ? '' : `${lines.join('\r\n')}\r\n`;
}

test('messages are DKIM-signed with the key whose public half the domain publishes', async () => {
  const res = await t.send({ subject: 'Signed ✓', text: 'Body  with   spaces \n\n', html: '<p>hi</p>' });
  assert.equal(res.status, 202, res.text);
  await t.waitForFinal(res.body.id);
  const list = await t.admin('GET', `/admin/v1/messages?to=${encodeURIComponent(`user@${t.domain}`)}`);
  const captured = list.body.messages[0];
  const raw = (await t.admin('GET', `/admin/v1/messages/${captured.id}/raw`)).text;

  const { headers, body } = splitMessage(raw);
  const sigHeader = headers.find(([n]) => n.toLowerCase() === 'dkim-signature');
  assert.ok(sigHeader, 'DKIM-Signature present');
  const tags = Object.fromEntries(
    sigHeader[1].replace(/\s+/g, '').split(';').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
  assert.equal(tags.d, t.domain);
  assert.equal(tags.a, 'rsa-sha256');
  assert.equal(tags.c, 'relaxed/relaxed');

  const domains = await t.admin('GET', `/admin/v1/projects/${t.projectId}/domains`);
  const record = domains.body.domains[0].records.find((r: any) => r.purpose === 'dkim');
  assert.equal(record.name, `${tags.s}._domainkey.${t.domain}`);
  const publicKey = createPublicKey({ key: Buffer.from(/p=([^;]+)/.exec(record.value)![1]!, 'base64'), format: 'der', type: 'spki' });

  assert.equal(createHash('sha256').update(relaxedBody(body)).digest('base64'), tags.bh, 'body hash');
  // Signed headers, each taken from the bottom-most unused instance (RFC 6376 5.4.2).
  const remaining = headers.filter(([n]) => n.toLowerCase() !== 'dkim-signature');
  const signedLines = (tags.h as string).split(':').flatMap((name) => {
    for (let i = remaining.length - 1; i >= 0; i--) {
      if (remaining[i]![0].toLowerCase() === name.toLowerCase()) return [relaxedHeader(...remaining.splice(i, 1)[0]!)];
    }
    return [];
  });
  const unsignedSig = relaxedHeader('DKIM-Signature', sigHeader[1].replace(/b=[^;]*$/, 'b=').replace(/(;\s*)b=[^;]*(;|$)/, '$1b=$2'));
  const data = `${signedLines.join('\r\n')}\r\n${unsignedSig}`;
  assert.ok(verify('sha256', Buffer.from(data), publicKey, Buffer.from(tags.b as string, 'base64')), 'signature verifies');
  assert.ok((tags.h as string).toLowerCase().split(':').includes('from'), 'From is signed');
});

test('a sender whose domain is written in capitals is signed with that domain\'s key', async () => {
  const signed = await t.send({ from: `Shop <Shop@${t.domain.toUpperCase()}>`, subject: 'capitals' });
  assert.equal(signed.status, 202, signed.text);
  await t.waitForFinal(signed.body.id);
  const list = await t.admin('GET', `/admin/v1/messages?to=${encodeURIComponent(`user@${t.domain}`)}`);
  const captured = list.body.messages.find((m: any) => m.subject === 'capitals');
  const raw = (await t.admin('GET', `/admin/v1/messages/${captured.id}/raw`)).text;
  assert.match(raw, new RegExp(`^DKIM-Signature:[^]*?\\bd=${t.domain.replace(/\./g, '\\.')};`, 'm'));
});
