// `ravenctl listen` as a real process: it connects to the relay's listen hub, prints a session
// secret, forwards each event signed with it to a local receiver, survives a relay restart, and
// exits 130 on Ctrl-C.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startRelay, type Relay } from '../../relay/app.js';
import { verifyWebhook } from '../../sdk/webhooks.js';
import { spawnRavenctl } from '../helpers/ravenctl.js';
import { plainMessage, submitOnce } from '../helpers/submission.js';
import { ADMIN_TOKEN, startTestRelay, type TestRelay } from '../helpers/start-relay.js';

interface Received {
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
}

interface Cli {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  waitFor(stream: 'stdout' | 'stderr', pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exit: Promise<number | null>;
}

function startCli(args: string[], env: Record<string, string> = {}): Cli {
  // HOME is the run's own empty folder (removed when it exits): no config, and listen's secret file goes there.
  const child = spawnRavenctl(args, { env });
  child.stdin.end();
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : null))));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exit,
    async waitFor(stream, pattern, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const m = (stream === 'stdout' ? out : err).match(pattern);
        if (m) return m;
        if (Date.now() > deadline || child.exitCode !== null) {
          throw new Error(`no ${pattern} on ${stream}; stdout: ${out}\nstderr: ${err}`);
        }
        await new Promise((r) => setTimeout(r, 25));
      }
    },
  };
}

describe('ravenctl listen', () => {
  let t: TestRelay;
  let dataDir: string;
  let receiver: http.Server;
  let receiverUrl: string;
  const received: Received[] = [];
  const cleanups: Array<() => Promise<unknown>> = [];

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'raven-listen-'));
    t = await startTestRelay({ dataDir });
    receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ headers: req.headers, raw: Buffer.concat(chunks) });
        res.writeHead(received.length === 1 ? 200 : 202);
        res.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks`;
  });
  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    receiver.closeAllConnections();
    await new Promise((r) => receiver.close(r));
    await rm(dataDir, { recursive: true, force: true });
  });

  test('forwards signed events, reconnects after a relay restart, exits 130 on Ctrl-C', async () => {
    // Straight to the relay (not through the contract proxy), so the restarted relay has the same address.
    const cli = startCli(['listen', '--forward-to', receiverUrl, '--events', 'email.queued', '--base-url', t.directUrl, '--api-key', t.apiKey, '--no-json']);
    cleanups.push(async () => {
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
    });
    const [, secret] = await cli.waitFor('stderr', /Ready! Your webhook signing secret is (whsec_[A-Za-z0-9_-]+) \(\^C to quit\)/);

    const sent = await t.send();
    assert.equal(sent.status, 202);
    const line = await cli.waitFor('stdout', /^.*email\.queued.*$/m);
    assert.match(line[0], new RegExp(`${sent.body.id}.*\\[200\\]`));
    assert.match(line[0], /^\d{4}-\d{2}-\d{2}T/);

    assert.equal(received.length, 1);
    const event = verifyWebhook(received[0]!.raw, received[0]!.headers, secret!) as unknown as { id: string; type: string; data: { email_id: string } };
    assert.equal(event.type, 'email.queued');
    assert.equal(event.data.email_id, sent.body.id);
    assert.equal(received[0]!.headers['service-event-id'], event.id);
    assert.equal(received[0]!.headers['content-type'], 'application/json');
    assert.match(String(received[0]!.headers['service-signature']), /^v1=[0-9a-f]{64}$/);

    // Restart the relay on the same address; the command says so and carries on.
    const port = new URL(t.relay.httpUrl).port;
    await t.stop();
    await cli.waitFor('stderr', /Lost the connection to the relay/);
    const relay: Relay = await startRelay({
      flags: { dataDir, database: t.relay.config.database, host: '127.0.0.1', port, smtpPort: 0, adminToken: ADMIN_TOKEN, logLevel: 'error' },
      env: {},
    });
    cleanups.push(() => relay.stop());
    await cli.waitFor('stderr', /Reconnected/);
    const res = await fetch(`${relay.httpUrl}/v1/emails`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ from: `sender@${t.domain}`, to: `user@${t.domain}`, subject: 'Again', text: 'Hi' }),
    });
    assert.equal(res.status, 202);
    const second = (await res.json()) as { id: string };
    await cli.waitFor('stdout', new RegExp(`${second.id}.*\\[202\\]`));
    assert.equal(received.length, 2);
    verifyWebhook(received[1]!.raw, received[1]!.headers, secret!);

    cli.child.kill('SIGINT');
    assert.equal(await cli.exit, 130);
  });

  test('--json: the secret as the first JSON line, then one JSON line per forwarded event', async () => {
    const t2 = await startTestRelay();
    cleanups.push(() => t2.stop());
    const before = received.length;
    const cli = startCli(['listen', '--forward-to', receiverUrl, '--base-url', t2.url, '--json'], { RAVEN_API_KEY: t2.apiKey });
    cleanups.push(async () => {
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
    });
    const [first] = await cli.waitFor('stdout', /^\{.*\}$/m);
    const { secret } = JSON.parse(first) as { secret: string };
    assert.match(secret, /^whsec_/);

    const sent = await t2.send();
    await cli.waitFor('stdout', /"event_type":"email\.delivered"/);
    const lines = cli
      .stdout()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(Object.keys(lines[0]), ['secret']);
    const queued = lines.find((l) => l.event_type === 'email.queued');
    assert.equal(queued.email_id, sent.body.id);
    assert.equal(queued.status_code, 202);
    assert.equal(queued.error, null);
    assert.match(queued.event_id, /^evt_/);
    for (const r of received.slice(before)) verifyWebhook(r.raw, r.headers, secret);
    assert.equal(cli.stderr(), '', 'nothing on stderr in JSON mode');

    cli.child.kill('SIGINT');
    assert.equal(await cli.exit, 130);
  });

  test('an email submitted over SMTP reaches listen like one sent through the API', async () => {
    const t2 = await startTestRelay();
    cleanups.push(() => t2.stop());
    const cli = startCli(['listen', '--forward-to', receiverUrl, '--base-url', t2.url, '--json'], { RAVEN_API_KEY: t2.apiKey });
    cleanups.push(async () => {
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
    });
    await cli.waitFor('stdout', /^\{.*\}$/m);
    const reply = await submitOnce(t2, t2.apiKey, [`ada@${t2.domain}`], plainMessage({ from: `hello@${t2.domain}`, to: `ada@${t2.domain}` }));
    const id = /^250 2\.0\.0 (em_\w+) queued$/.exec(reply)?.[1];
    assert.ok(id, reply);
    await cli.waitFor('stdout', new RegExp(`"email_id":"${id}"[^\\n]*"event_type":"email\\.delivered"|"event_type":"email\\.delivered"[^\\n]*"email_id":"${id}"`));
    cli.child.kill('SIGINT');
    assert.equal(await cli.exit, 130);
  });

  test('a wrong key exits 1 with invalid_api_key; no relay exits 3', async () => {
    const t3 = await startTestRelay();
    cleanups.push(() => t3.stop());
    const refused = startCli(['listen', '--forward-to', receiverUrl, '--base-url', t3.url, '--api-key', 'rr_test_wrong', '--json']);
    assert.equal(await refused.exit, 1);
    assert.equal(JSON.parse(refused.stderr().trim()).error.code, 'invalid_api_key');

    const port = new URL(t3.relay.httpUrl).port;
    await t3.stop();
    const unreachable = startCli(['listen', '--forward-to', receiverUrl, '--base-url', `http://127.0.0.1:${port}`, '--api-key', 'rr_test_x', '--json']);
    assert.equal(await unreachable.exit, 3);
    assert.equal(JSON.parse(unreachable.stderr().trim()).error.code, 'connection_error');
  });

  test('usage errors exit 2: no --forward-to, a bad URL, an unknown event type', async () => {
    for (const args of [
      ['listen', '--api-key', 'rr_test_x'],
      ['listen', '--forward-to', 'localhost:3000', '--api-key', 'rr_test_x'],
      ['listen', '--forward-to', receiverUrl, '--events', 'email.opened', '--api-key', 'rr_test_x'],
    ]) {
      const cli = startCli([...args, '--json']);
      assert.equal(await cli.exit, 2, `${args.join(' ')}: ${cli.stderr()}`);
    }
  });
});
