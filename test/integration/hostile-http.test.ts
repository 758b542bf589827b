// Hostile HTTP input: each case gets the contract's error and the relay keeps serving.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';

let t: TestRelay;
before(async () => {
  t = await startTestRelay();
});
after(async () => {
  await t.stop();
});

function raw(body: Buffer | string, headers: http.OutgoingHttpHeaders = {}): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${t.url}/v1/emails`,
      { method: 'POST', headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json', ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const valid = () => ({ from: `a@${t.domain}`, to: `b@${t.domain}`, subject: 's', text: 't' });

test('repeated Authorization or Idempotency-Key headers are 400 invalid_request', async () => {
  // Node sends an array value as repeated header lines.
  const repeated = [{ authorization: [`Bearer ${t.apiKey}`, `Bearer ${t.apiKey}`] }, { 'idempotency-key': ['a', 'b'] }] as unknown as http.OutgoingHttpHeaders[];
  for (const headers of repeated) {
    const res = await raw(JSON.stringify(valid()), headers);
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body.error.code, 'invalid_request');
  }
});

test('invalid UTF-8, lone surrogates and deep nesting are 400; __proto__ is plain data', async () => {
  const invalidUtf8 = Buffer.concat([Buffer.from('{"from":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
  assert.equal((await raw(invalidUtf8)).status, 400);
  assert.equal((await raw('{"subject":"\\ud800"}')).status, 400);
  assert.equal((await raw(`${'['.repeat(5000)}${']'.repeat(5000)}`)).status, 400);
  const proto = await raw(`{"from":"a@${t.domain}","to":"b@${t.domain}","subject":"s","text":"t","metadata":{"__proto__":"x","__proto__":"y"}}`);
  assert.equal(proto.status, 400, 'a repeated __proto__ key is a repeated key');
  const protoOnce = await raw(`{"from":"a@${t.domain}","to":"b@${t.domain}","subject":"s","text":"t","metadata":{"__proto__":"x"}}`);
  assert.equal(protoOnce.status, 202, JSON.stringify(protoOnce.body));
  assert.equal(({} as any).x, undefined);
});

test('numbers beyond 2^53 where strings belong are validation errors', async () => {
  const res = await raw(`{"from":"a@${t.domain}","to":"b@${t.domain}","subject":12345678901234567890123,"text":"t"}`);
  assert.equal(res.status, 422);
  assert.equal(res.body.error.details[0].field, 'subject');
});

test('a slow client that never finishes its headers does not stop the relay serving', async () => {
  const socket = net.connect(Number(new URL(t.directUrl).port), '127.0.0.1');
  socket.on('error', () => {});
  socket.write('POST /v1/emails HTTP/1.1\r\nHost: x\r\n');
  const res = await t.send({});
  assert.equal(res.status, 202);
  socket.destroy();
});
