// Keep-alive: an idle connection stays usable past the time the relay advertises for it, so a
// client that reuses it up to that time (undici: two seconds before) never sends a request on a
// connection the relay has closed, even when the client's event loop stalls meanwhile (a busy
// machine), which it would hear as no answer at all ("other side closed").
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';

let t: TestRelay;
before(async () => {
  t = await startTestRelay();
});
after(async () => {
  await t?.stop();
});

/** A raw keep-alive connection: ask(path) sends one request and resolves with the response's head. */
function connection(port: number): Promise<{ ask(path: string): Promise<string>; closed(): boolean; end(): void }> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    let waiting: ((head: string) => void) | undefined;
    let closed = false;
    const socket = net.connect(port, '127.0.0.1', () =>
      resolve({
        ask(path) {
          return new Promise((answered, failed) => {
            if (closed) return failed(new Error('the relay closed the connection'));
            waiting = answered;
            socket.once('close', () => failed(new Error('the relay closed the connection without an answer')));
            socket.write(`GET ${path} HTTP/1.1\r\nHost: relay.test\r\n\r\n`);
          });
        },
        closed: () => closed,
        end: () => socket.destroy(),
      }),
    );
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      const end = buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buffer.slice(0, end);
      const length = Number(/^content-length: *(\d+)/im.exec(head)?.[1] ?? 0);
      if (buffer.length < end + 4 + length) return;
      buffer = buffer.slice(end + 4 + length);
      const answered = waiting;
      waiting = undefined;
      answered?.(head);
    });
    socket.on('close', () => (closed = true));
    socket.on('error', reject);
  });
}

test('an idle keep-alive connection is still answered after the time its Keep-Alive header advertises', async () => {
  const conn = await connection(Number(new URL(t.directUrl).port));
  try {
    const first = await conn.ask('/livez');
    assert.match(first, /^HTTP\/1\.1 200 /);
    assert.match(first, /^connection: keep-alive$/im);
    const advertised = Number(/^keep-alive: timeout=(\d+)$/im.exec(first)?.[1]);
    assert.ok(advertised >= 1, first);
    // Idle a second past what was advertised: a client may have picked the connection at the
    // last moment and then stalled.
    await new Promise((r) => setTimeout(r, (advertised + 1) * 1000));
    assert.equal(conn.closed(), false, 'the connection is still open');
    assert.match(await conn.ask('/livez'), /^HTTP\/1\.1 200 /);
  } finally {
    conn.end();
  }
});
