// Bus events past NOTIFY's 8,000-byte limit cross relays whole (issue 24): an email event whose
// webhook body carries twenty long tags reaches `ravenctl listen` on another relay, and a captured
// message with a long subject and To list reaches another relay's dashboard as the message (never
// a bare "changed") and its wait endpoint. The rows that carry them are deleted after a minute.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import nodemailer from 'nodemailer';
import WebSocket from 'ws';
import { verifyWebhook } from '../../sdk/webhooks.js';
import { ADMIN_TOKEN, startCluster, waitFor, type Cluster } from '../helpers/postgres-cluster.js';
import { spawnRavenctl } from '../helpers/ravenctl.js';
import { call } from '../helpers/start-relay.js';
import { startReceiver, type Receiver } from '../helpers/webhooks.js';

/** Twenty tags of 256-character names and values: a webhook body of about 10 KB. */
const bigTags = () => Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`t${String(i).padStart(2, '0')}_${'n'.repeat(252)}`, 'v'.repeat(256)]));

/** The dashboard's live inbox on a relay, signed in there: every frame it receives, parsed. */
async function openDashboard(httpUrl: string): Promise<{ frames: any[]; close(): void }> {
  const signedIn = await call(httpUrl, 'POST', '/admin/v1/session', { body: { token: ADMIN_TOKEN } });
  assert.equal(signedIn.status, 201, signedIn.text);
  const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
  const url = new URL(httpUrl);
  const ws = new WebSocket(`ws://${url.host}/admin/v1/inbox/live`, { headers: { cookie, origin: url.origin } });
  const frames: any[] = [];
  ws.on('message', (data) => frames.push(JSON.parse(String(data))));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { frames, close: () => ws.terminate() };
}

describe('bus events past the NOTIFY limit, across two relays', () => {
  let cluster: Cluster;
  let receiver: Receiver;
  before(async () => {
    cluster = await startCluster({ relays: 2 });
    receiver = await startReceiver();
  });
  after(async () => {
    await cluster?.stop();
    await receiver?.close();
  });

  test('an email event with twenty long tags reaches ravenctl listen on the other relay whole', async () => {
    const cli = spawnRavenctl(['listen', '--forward-to', receiver.url, '--events', 'email.queued', '--base-url', cluster.relays[1]!.httpUrl, '--json'], {
      env: { RAVEN_API_KEY: cluster.apiKey },
    });
    cli.stdin.end();
    let out = '';
    cli.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    try {
      const secret = await waitFor('listen ready', async () => /^\{"secret":"(whsec_[^"]+)"\}$/m.exec(out)?.[1], 30_000);
      const tags = bigTags();
      // Admitted by relay 0: its email.queued event crosses to relay 1 only over the bus.
      const sent = await cluster.send(0, { subject: 'Tagged', tags });
      assert.equal(sent.status, 202, sent.text);
      const [request] = await receiver.waitForCount(1, 30_000);
      assert.ok(request!.raw.length > 8_000, `a webhook body of ${request!.raw.length} bytes`);
      const event = verifyWebhook(request!.raw, request!.headers, secret) as unknown as { type: string; data: { email_id: string; tags: unknown } };
      assert.equal(event.type, 'email.queued');
      assert.equal(event.data.email_id, sent.body.id);
      assert.deepEqual(event.data.tags, tags);
      // It travelled as a stored row, not as a notification of its own.
      const [stored] = await cluster.sql<{ n: number }>('SELECT COUNT(*)::int AS n FROM bus_payloads');
      assert.ok(stored!.n >= 1);
    } finally {
      cli.kill('SIGKILL');
    }
  });

  test("a captured message too large for a notification reaches the other relay's dashboard and wait endpoint whole", async () => {
    const [a, b] = cluster.relays;
    const dashboard = await openDashboard(b!.httpUrl);
    try {
      const subject = `Oversized ${Array.from({ length: 1_200 }, (_, i) => `w${i}`).join(' ')}`;
      const to = Array.from({ length: 40 }, (_, i) => `reader-${i}-${'x'.repeat(60)}@elsewhere.test`);
      // Into relay a's sink: relay a indexes it, so relay b hears of it only over the bus.
      const sink = new URL(String(a!.ready.smtp_url));
      const transport = nodemailer.createTransport({ host: sink.hostname, port: Number(sink.port), ignoreTLS: true });
      try {
        await transport.sendMail({ from: 'app@elsewhere.test', to, subject, text: 'Your code is 482913.' });
      } finally {
        transport.close();
      }
      const frame = await waitFor(
        'the message on relay b\'s dashboard',
        async () => dashboard.frames.find((f) => f.type === 'changed' || f.messages?.some((m: { subject: string }) => m.subject === subject)),
        30_000,
      );
      assert.equal(frame.type, 'captured', 'the message itself, not a bare "changed"');
      const entry = frame.messages.find((m: { subject: string }) => m.subject === subject);
      assert.ok(JSON.stringify(entry).length > 8_000);
      assert.equal(entry.to, to.join(', '));
      assert.equal(entry.snippet, 'Your code is 482913.');
      assert.ok(frame.unread >= 1);

      const waited = await call(b!.httpUrl, 'GET', `/admin/v1/messages/wait?subject=${encodeURIComponent('Oversized w0 w1')}&timeout=30`, { token: ADMIN_TOKEN });
      assert.equal(waited.status, 200, waited.text);
      assert.equal(waited.body.subject, subject);
      assert.deepEqual(waited.body.codes, ['482913']);
    } finally {
      dashboard.close();
    }
  });

  test('rows older than a minute are deleted by the next oversized publish', async () => {
    await cluster.sql("INSERT INTO bus_payloads (payload, created_at) VALUES ('{}', clock_timestamp() - interval '61 seconds')");
    const [old] = await cluster.sql<{ id: number }>('SELECT max(id)::int AS id FROM bus_payloads');
    const sent = await cluster.send(1, { subject: 'Tagged again', tags: bigTags() });
    assert.equal(sent.status, 202, sent.text);
    await waitFor('a newer row', async () => (await cluster.sql('SELECT id FROM bus_payloads WHERE id > $1', [old!.id])).length > 0);
    const left = await cluster.sql("SELECT id FROM bus_payloads WHERE created_at < clock_timestamp() - interval '60 seconds'");
    assert.deepEqual(left, [], 'the expired row is gone');
  });
});
