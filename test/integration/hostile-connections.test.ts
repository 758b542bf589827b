// Hostile connections (issue 20): clients that send slowly, never read, hang up mid-body or break
// the chunked encoding get their answer and lose their socket, and are counted and logged as the
// client's doing, never as the relay's internal error.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';
import { openServerSockets, waitForServerSockets } from '../helpers/open-sockets.js';

const HEADERS_TIMEOUT_MS = 500;

let t: TestRelay;
let port: number;
const errorLines: unknown[][] = [];
before(async () => {
  t = await startTestRelay({ overrides: (config) => void (config.limits.httpHeadersTimeoutMs = HEADERS_TIMEOUT_MS) });
  port = Number(new URL(t.directUrl).port);
  const log = t.relay.services.log;
  const error = log.error;
  log.error = (...args) => {
    errorLines.push(args);
    error(...args);
  };
});
after(async () => {
  await t?.stop();
});

/** A raw connection to the relay itself (not the contract proxy) that sends `data` and never reads. */
function neverReading(data: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(data);
      resolve(socket);
    });
    socket.pause();
    socket.on('error', reject);
  });
}

async function metric(series: string): Promise<number> {
  const text = await (await fetch(`${t.directUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

async function waitForMetric(series: string, min: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while ((await metric(series)) < min) {
    if (Date.now() > deadline) throw new Error(`${series} stayed below ${min}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('slow headers from clients that never read: answered, then their descriptors come back (FIN-WAIT-2 exhaustion)', async () => {
  const clients = await Promise.all(Array.from({ length: 10 }, () => neverReading('GET /livez HTTP/1.1\r\nHost: relay\r\nX-Slow: ')));
  try {
    // Past the header time-out the relay answers and must let go of every socket, though none
    // of the clients reads the answer or closes its side.
    const left = await waitForServerSockets(port, 0, 30_000);
    assert.equal(left, 0, `${left} of 10 slow connections still hold a descriptor in the relay`);
  } finally {
    for (const c of clients) c.destroy();
  }
});

test('a malformed request from a client that never reads: answered 400, then its descriptor comes back', async () => {
  const clients = await Promise.all(Array.from({ length: 10 }, () => neverReading('NOT HTTP AT ALL\r\n\r\n')));
  try {
    const left = await waitForServerSockets(port, 0, 30_000);
    assert.equal(left, 0, `${left} of 10 refused connections still hold a descriptor in the relay`);
  } finally {
    for (const c of clients) c.destroy();
  }
  assert.equal(openServerSockets(port), 0);
});

test('a client aborting mid-body or sending a bad chunk is counted aborted, not internal_error, and not logged as an error', async () => {
  const aborted = 'raven_admissions_total{result="aborted"}';
  const internal = 'raven_admission_rejections_total{code="internal_error"}';
  const [abortedBefore, internalBefore] = [await metric(aborted), await metric(internal)];
  const errorsBefore = errorLines.length;
  const head = `POST /v1/emails HTTP/1.1\r\nHost: relay\r\nAuthorization: Bearer ${t.apiKey}\r\nContent-Type: application/json\r\n`;

  // Hangs up with 990 of the 1,000 bytes it announced still to come.
  const hangsUp = await neverReading(`${head}Content-Length: 1000\r\n\r\n{"from":"a`);
  hangsUp.destroy();
  await waitForMetric(aborted, abortedBefore + 1);

  // A chunk size that is not hexadecimal.
  const badChunk = await neverReading(`${head}Transfer-Encoding: chunked\r\n\r\n4\r\n{"fr\r\nZZ\r\n`);
  await waitForMetric(aborted, abortedBefore + 2);
  badChunk.destroy();

  assert.equal(await metric(internal), internalBefore, 'client disconnects are not internal errors');
  assert.deepEqual(errorLines.slice(errorsBefore), [], 'nothing logged at error level');
  // The relay goes on serving.
  assert.equal((await t.send()).status, 202);
});
