// The listen hub (GET /v1/listen as a WebSocket): refusals before the upgrade, the project's
// events as text frames holding exactly the webhook body, the events filter, shutdown.
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { createProjectWithKey, startTestRelay, type TestRelay } from '../helpers/start-relay.js';
import { createEndpoint, sleep, startReceiver, type Receiver } from '../helpers/webhooks.js';

interface Connected {
  ws: WebSocket;
  /** The Request-Id header of the handshake's 101 answer. */
  requestId: unknown;
  frames: string[];
  waitForFrames(n: number, timeoutMs?: number): Promise<string[]>;
}

function wsUrl(base: string, query = ''): string {
  return `${base.replace(/^http/, 'ws')}/v1/listen${query}`;
}

function connect(url: string, key: string | null): Promise<Connected> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: key ? { authorization: `Bearer ${key}` } : {} });
    const frames: string[] = [];
    let requestId: unknown;
    ws.once('upgrade', (res: IncomingMessage) => (requestId = res.headers['request-id']));
    ws.on('message', (data, isBinary) => {
      assert.equal(isBinary, false, 'events arrive as text frames');
      frames.push((data as Buffer).toString('utf8'));
    });
    ws.once('open', () =>
      resolve({
        ws,
        requestId,
        frames,
        async waitForFrames(n, timeoutMs = 10_000) {
          const deadline = Date.now() + timeoutMs;
          while (frames.length < n) {
            if (Date.now() > deadline) throw new Error(`got ${frames.length} frames, expected ${n}`);
            await sleep(20);
          }
          return frames;
        },
      }),
    );
    ws.once('unexpected-response', (_req, res) => reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { res })));
    ws.once('error', reject);
  });
}

/** The HTTP answer to an upgrade the hub refuses: status and JSON body. */
async function refusal(url: string, key: string | null, headers: Record<string, string> = {}): Promise<{ status: number; body: any; requestId: unknown }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers } });
    ws.once('open', () => {
      ws.close();
      reject(new Error('the upgrade was accepted'));
    });
    ws.once('unexpected-response', (_req, res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined, requestId: res.headers['request-id'] });
      });
    });
    ws.once('error', () => undefined);
  });
}

describe('listen hub', () => {
  let t: TestRelay;
  let receiver: Receiver;
  before(async () => {
    t = await startTestRelay();
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await t.stop();
  });

  test('refuses a missing or wrong key with 401 before upgrading', async () => {
    for (const key of [null, 'rr_test_not_a_real_key']) {
      const res = await refusal(wsUrl(t.url), key);
      assert.equal(res.status, 401);
      assert.equal(res.body.error.code, 'invalid_api_key');
      assert.match(String(res.requestId), /^req_/);
    }
  });

  test('refuses an unknown event type with 422 validation_error', async () => {
    const res = await refusal(wsUrl(t.url, '?events=email.delivered,email.opened'), t.apiKey);
    assert.equal(res.status, 422);
    assert.equal(res.body.error.code, 'validation_error');
    assert.equal(res.body.error.details[0].field, 'events');
  });

  test('other upgrade paths get a 404 and are closed', async () => {
    const res = await refusal(`${t.url.replace(/^http/, 'ws')}/v1/emails`, t.apiKey);
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, 'not_found');
  });

  test('streams the project events as the exact webhook bodies', async () => {
    const hook = await createEndpoint(t, receiver.url, ['email.queued']);
    const listener = await connect(wsUrl(t.url), t.apiKey);
    try {
      // The 101 is an answer like any other: it carries a Request-Id (CONTRACT section 1).
      assert.match(String(listener.requestId), /^req_\w+$/);
      const sent = await t.send();
      assert.equal(sent.status, 202);
      const [frame] = await listener.waitForFrames(1);
      const event = JSON.parse(frame!);
      assert.equal(event.type, 'email.queued');
      assert.equal(event.data.email_id, sent.body.id);
      // The same bytes the webhook endpoint receives.
      const [req] = await receiver.waitForCount(1);
      assert.equal(frame, req!.raw.toString('utf8'));
      // Later events of the email follow (the sink delivers it).
      const frames = await listener.waitForFrames(3);
      assert.deepEqual(
        frames.map((f) => JSON.parse(f).type),
        ['email.queued', 'email.sent', 'email.delivered'],
      );
    } finally {
      listener.ws.close();
      await t.admin('DELETE', `/admin/v1/webhooks/${hook.id}`);
    }
  });

  test('?events= filters, and another project sees nothing of this one', async () => {
    const other = await createProjectWithKey(t);
    const filtered = await connect(wsUrl(t.url, '?events=email.delivered'), t.apiKey);
    const stranger = await connect(wsUrl(t.url), other.key);
    try {
      const sent = await t.send();
      // Its email.queued and email.sent come first: had they passed the filter, this would not be the first frame.
      const [frame] = await filtered.waitForFrames(1);
      assert.equal(JSON.parse(frame!).type, 'email.delivered');
      assert.equal(JSON.parse(frame!).data.email_id, sent.body.id);
      // The other project's own email comes after every event of this one: the first frame it sees must be its own.
      const own = await t.send({ from: `Other <sender@${other.domain}>`, to: `user@${other.domain}` }, { key: other.key });
      const [first] = await stranger.waitForFrames(1);
      assert.equal(JSON.parse(first!).data.email_id, own.body.id, 'events never cross projects');
      assert.equal(filtered.frames.length, 1, 'only email.delivered');
    } finally {
      filtered.ws.close();
      stranger.ws.close();
    }
  });
});

describe('listen hub shutdown', () => {
  test('stopping the relay closes listeners with 1001 (going away)', async () => {
    const t = await startTestRelay();
    const listener = await connect(wsUrl(t.relay.httpUrl), t.apiKey);
    const closed = new Promise<number>((resolve) => listener.ws.once('close', (code) => resolve(code)));
    const started = Date.now();
    await t.stop();
    assert.equal(await closed, 1001);
    assert.ok(Date.now() - started < 3_000, 'shutdown does not wait for listeners');
  });
});
