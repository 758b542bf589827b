// The SDK's retries against the real relay, through a fault-injecting proxy: answers lost after
// the relay committed, 503s and 429s. The same Idempotency-Key goes out on every try, so however
// often the SDK retries, exactly one email exists.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Raven } from '../../sdk/index.js';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';

type Fault = 'lose-response' | '503' | '429' | 'none';

let t: TestRelay;
let proxy: http.Server;
let proxyUrl: string;
const faults: Fault[] = [];
const seen: Array<{ key: string | undefined; retry: string | undefined; fault: Fault }> = [];

before(async () => {
  t = await startTestRelay();
  proxy = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const fault = req.method === 'POST' ? (faults.shift() ?? 'none') : 'none';
      seen.push({ key: req.headers['idempotency-key'] as string | undefined, retry: req.headers['raven-retry-count'] as string | undefined, fault });
      if (fault === '503' || fault === '429') {
        const code = fault === '503' ? 'service_unavailable' : 'rate_limit_exceeded';
        res.writeHead(Number(fault), { 'content-type': 'application/json', 'retry-after': '1', 'request-id': 'req_fault' });
        res.end(JSON.stringify({ error: { code, message: `injected; retry after 1 second`, retry_after: 1 } }));
        return;
      }
      const upstream = http.request(t.url + req.url, { method: req.method, headers: req.headers }, (up) => {
        const body: Buffer[] = [];
        up.on('data', (c: Buffer) => body.push(c));
        up.on('end', () => {
          if (fault === 'lose-response') {
            // The relay committed the email; the client never hears about it.
            res.writeHead(502, { 'content-type': 'application/json', 'request-id': 'req_fault' });
            res.end(JSON.stringify({ error: { code: 'internal_error', message: 'bad gateway' } }));
            return;
          }
          res.writeHead(up.statusCode ?? 500, up.headers);
          res.end(Buffer.concat(body));
        });
      });
      upstream.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', () => resolve()));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});

after(async () => {
  await new Promise<void>((resolve) => proxy.close(() => resolve()));
  await t.stop();
});

test('a lost answer, a 503 and a 429 are retried with one key, and one email exists', async () => {
  faults.push('lose-response', '503', '429');
  seen.length = 0;
  const raven = new Raven({ apiKey: t.apiKey, baseUrl: proxyUrl, maxRetries: 3 });
  const { data, idempotencyKey } = await raven.emails
    .send({ from: `a@${t.domain}`, to: `retry@${t.domain}`, subject: 'retried', text: 'x' })
    .withResponse();
  assert.equal(data.status, 'queued');
  assert.deepEqual(seen.map((s) => s.fault), ['lose-response', '503', '429', 'none']);
  assert.ok(idempotencyKey);
  assert.ok(seen.every((s) => s.key === idempotencyKey), JSON.stringify(seen));
  assert.deepEqual(seen.map((s) => s.retry ?? '0'), ['0', '1', '2', '3']);
  const list = await t.api('GET', `/v1/emails?recipient=retry@${t.domain}`);
  assert.deepEqual(list.body.emails.map((e: any) => e.id), [data.id], 'the lost first try and the replay are the same email');
});

test('with retries disabled the injected 503 surfaces as a typed error', async () => {
  faults.push('503');
  const raven = new Raven({ apiKey: t.apiKey, baseUrl: proxyUrl, maxRetries: 0 });
  await assert.rejects(
    raven.emails.send({ from: `a@${t.domain}`, to: `noretry@${t.domain}`, subject: 's', text: 'x' }),
    (error: any) => error.status === 503 && error.code === 'service_unavailable' && error.requestId === 'req_fault',
  );
});
