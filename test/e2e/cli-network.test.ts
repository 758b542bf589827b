// ravenctl when the network says no: a relay that is not running and an https:// URL for the
// plain-HTTP relay are reported at once with what to do; a send that gets no answer prints the
// exact command that retries it safely (same Idempotency-Key).
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';
import { ravenctl } from '../helpers/ravenctl.js';

let t: TestRelay;
before(async () => {
  t = await startTestRelay();
});
after(() => t.stop());

const listening = async (server: http.Server) => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

test('a relay that is not running: exit 3 and how to start it or point elsewhere', async () => {
  // A stopped relay: its address is known and nothing listens there any more.
  const stopped = http.createServer();
  const url = await listening(stopped);
  await new Promise((resolve) => stopped.close(resolve));
  const run = await ravenctl(['emails', 'list', '--api-key', t.apiKey, '--base-url', url, '--json']);
  assert.equal(run.code, 3);
  assert.deepEqual(JSON.parse(run.stderr).error, {
    code: 'connection_error',
    message: `relay not reachable at ${url}: start it with npm run relay, or set --base-url / RAVEN_BASE_URL`,
    status: null,
  });
});

test('https:// against the plain-HTTP relay: exit 3 naming the http:// URL, no OpenSSL trace', async () => {
  const https = t.directUrl.replace('http://', 'https://');
  const run = await ravenctl(['emails', 'list', '--api-key', t.apiKey, '--base-url', https]);
  assert.equal(run.code, 3);
  assert.match(run.stderr, new RegExp(`^error: ${https} did not answer TLS: it speaks plain HTTP .*use ${t.directUrl}`));
  assert.doesNotMatch(run.stderr, /SSL routines|ssl3_get_record|ERR_SSL/);
});

test('a send that gets no answer prints the command that retries it with the same key', async () => {
  const keys: string[] = [];
  // Takes each request and drops the connection without answering: the email may or may not be queued.
  const dropping = http.createServer((req, res) => {
    keys.push(String(req.headers['idempotency-key']));
    req.resume();
    res.socket?.destroy();
  });
  const url = await listening(dropping);
  try {
    const args = ['send', '--from', 'Acme <hello@example.test>', '--to', 'ada@example.test', '--subject', "Ada's welcome", '--text', 'Hi', '--api-key', 'rr_test_x', '--base-url', url];
    const run = await ravenctl(args);
    assert.equal(run.code, 3, run.stderr);
    assert.ok(keys.length >= 1 && keys.every((key) => key === keys[0]), 'every attempt carried one key');
    const retry = /retry safely \(it is sent at most once\) with:\n {2}(.+)\n/.exec(run.stderr)?.[1];
    assert.equal(
      retry,
      `ravenctl send --from 'Acme <hello@example.test>' --to ada@example.test --subject 'Ada'\\''s welcome' --text Hi --api-key rr_test_x --base-url ${url} --idempotency-key ${keys[0]}`,
    );
  } finally {
    await new Promise((resolve) => dropping.close(resolve));
  }
});
