// A client that sends its request and then closes its side of the connection (shutdown(SHUT_WR):
// `nc -q`, HTTP/1.0 scripts) gets its answer before the relay closes the connection: node:http
// closed it at the client's FIN, before an async handler had answered, so a POST /v1/emails
// could admit an email and never say so. An idle keep-alive connection the client half-closes is
// still let go at once.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openServerSockets, waitForServerSockets } from '../helpers/open-sockets.js';
import { exchange, keepAliveConnection } from '../helpers/raw-http.js';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';

let t: TestRelay;
let port: number;
before(async () => {
  t = await startTestRelay();
  port = Number(new URL(t.directUrl).port);
});
after(async () => {
  await t?.stop();
});

const halfClosed = (request: string) => exchange(port, request, { halfClose: true });

test('GET /v1/emails from a client that half-closes after its request is answered 200 (HTTP/1.0 and 1.1)', async () => {
  for (const version of ['HTTP/1.0', 'HTTP/1.1\r\nHost: relay.test']) {
    const answer = await halfClosed(`GET /v1/emails ${version}\r\nAuthorization: Bearer ${t.apiKey}\r\n\r\n`);
    assert.equal(answer.status, 200, `${version}: ${JSON.stringify(answer.text)}`);
    assert.ok(Array.isArray(JSON.parse(answer.body).emails), answer.body);
  }
});

test('POST /v1/emails from a client that half-closes after its body: every email admitted is acknowledged 202 with its id', async () => {
  const acknowledged: string[] = [];
  for (const version of ['HTTP/1.0', 'HTTP/1.1\r\nHost: relay.test']) {
    const body = JSON.stringify({ from: `a@${t.domain}`, to: `b@${t.domain}`, subject: `half-closed ${version.slice(0, 8)}`, text: 't' });
    const head = `POST /v1/emails ${version}\r\nAuthorization: Bearer ${t.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
    const answer = await halfClosed(head + body);
    assert.equal(answer.status, 202, `${version}: ${JSON.stringify(answer.text)}`);
    acknowledged.push(JSON.parse(answer.body).id);
  }
  // What the relay admitted is exactly what it acknowledged: no email without its answer.
  const listed = await t.api('GET', '/v1/emails');
  assert.equal(listed.status, 200, listed.text);
  assert.deepEqual(listed.body.emails.map((e: { id: string }) => e.id).sort(), acknowledged.sort());
});

test('an idle keep-alive connection the client half-closes is closed by the relay at once, not held for its keep-alive time', async () => {
  const held = await keepAliveConnection(port);
  const closing = await keepAliveConnection(port);
  try {
    assert.match(await held.ask('/livez'), /^HTTP\/1\.1 200 /);
    assert.match(await closing.ask('/livez'), /^HTTP\/1\.1 200 /);
    await closing.halfClose(); // resolves when the relay has closed its side
    assert.equal(await waitForServerSockets(port, 0, 30_000, closing.localPort), 0, 'the relay still holds the half-closed connection');
    // The connection idle since before is still held: the half-closed one was let go for its FIN,
    // not because its keep-alive time ran out.
    assert.equal(held.closed(), false);
    assert.equal(openServerSockets(port, held.localPort), 1);
  } finally {
    held.end();
    closing.end();
  }
});
