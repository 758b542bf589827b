// Keep-alive: an idle connection stays usable past the time the relay advertises for it, so a
// client that reuses it up to that time (undici: two seconds before) never sends a request on a
// connection the relay has closed, even when the client's event loop stalls meanwhile (a busy
// machine), which it would hear as no answer at all ("other side closed").
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { keepAliveConnection } from '../helpers/raw-http.js';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';

let t: TestRelay;
before(async () => {
  t = await startTestRelay();
});
after(async () => {
  await t?.stop();
});

test('an idle keep-alive connection is still answered after the time its Keep-Alive header advertises', async () => {
  const conn = await keepAliveConnection(Number(new URL(t.directUrl).port));
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
