// A 250 over SMTP submission means committed, exactly as a 202 (CONTRACT section 9): the relay
// runs as a real process, nodemailer submits through a pool, and the relay is killed with SIGKILL
// mid-stream, a few times over on one data directory. Every message answered 250 is there after
// the restart and is delivered.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import nodemailer from 'nodemailer';
import { startRelayProcess, type RelayProcess } from '../helpers/relay-process.js';
import { call } from '../helpers/start-relay.js';

const ADMIN_TOKEN = 'submission-crash-token-0123456789';
const CYCLES = 3;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('kill -9 after a 250 loses nothing', { timeout: 180_000 }, async (t) => {
  const work = await mkdtemp(path.join(tmpdir(), 'raven-submission-crash-'));
  const configFile = path.join(work, 'config.json');
  await writeFile(configFile, JSON.stringify({ limits: { testKeyPerMinute: 1_000_000, keyPerSecond: 1_000_000, workspacePerSecond: 1_000_000, testKeyMonthlyRecipients: 1_000_000, workspaceMonthlyRecipients: 1_000_000 } }));
  let relay: RelayProcess | undefined;
  t.after(async () => {
    await relay?.kill9();
    await rm(work, { recursive: true, force: true });
  });
  const start = () => startRelayProcess({ dataDir: path.join(work, 'data'), adminToken: ADMIN_TOKEN, config: configFile });

  let apiKey = '';
  let domain = '';
  const acknowledged: string[] = [];
  for (let cycle = 0; cycle < CYCLES; cycle++) {
    relay = await start();
    if (cycle === 0) ({ api_key: apiKey, domain } = relay.ready.bootstrap);
    const transport = nodemailer.createTransport({
      pool: true,
      maxConnections: 4,
      host: '127.0.0.1',
      port: relay.ready.submission_port,
      auth: { user: 'raven', pass: apiKey },
    });
    let alive = true;
    const senders = Array.from({ length: 4 }, async (_, w) => {
      for (let n = 0; alive; n++) {
        try {
          const info = await transport.sendMail({ from: `hello@${domain}`, to: `c${cycle}@${domain}`, subject: `crash ${cycle}/${w}/${n}`, text: 'x' });
          const id = /^250 2\.0\.0 (em_\w+) queued$/.exec(info.response)?.[1];
          assert.ok(id, info.response);
          acknowledged.push(id);
        } catch {
          if (alive) await sleep(5); // cut by the kill: the client never saw a 250
        }
      }
    });
    // Kill once some messages were acknowledged in this cycle, with more in flight.
    const before = acknowledged.length;
    while (acknowledged.length < before + 5) await sleep(10);
    await relay.kill9();
    alive = false;
    await Promise.all(senders);
    transport.close();
  }

  relay = await start();
  const missing: string[] = [];
  for (const id of acknowledged) {
    const res = await call(relay.httpUrl, 'GET', `/v1/emails/${id}`, { token: apiKey });
    if (res.status !== 200) missing.push(id);
  }
  assert.deepEqual(missing, [], `${missing.length} of ${acknowledged.length} emails answered 250 are gone after kill -9`);
  // And the queue drains: every acknowledged email leaves queued.
  const deadline = Date.now() + 60_000;
  for (;;) {
    const queued = await call(relay.httpUrl, 'GET', '/v1/emails?status=queued&limit=1', { token: apiKey });
    if (queued.body.emails.length === 0) break;
    assert.ok(Date.now() < deadline, `emails still queued: ${queued.text}`);
    await sleep(100);
  }
  t.diagnostic(`${acknowledged.length} messages answered 250 over ${CYCLES} kill -9 cycles, all committed`);
});
