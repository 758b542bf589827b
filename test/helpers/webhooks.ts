// Shared by the webhook tests: a receiver on listen(0) that records every request with its raw
// body bytes and answers as the test says, small polling helpers, and a barrier to wait on.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { call, createProjectWithKey, startTestRelay, type TestRelay, type TestRelayOptions } from './start-relay.js';
import type { AttemptRow } from '../../relay/storage/webhooks.js';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
  /** Real time of arrival, ms. */
  at: number;
}

/** How the receiver answers one request: a status (and headers), never ('hang'), or by
 * destroying the connection without a response ('reset'). */
export type Answer = { status: number; headers?: Record<string, string>; body?: string | Buffer } | 'hang' | 'reset';

export interface Receiver {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** Decides the answer to each request (default 200), at once or when its promise settles. */
  answer: (req: ReceivedRequest) => Answer | Promise<Answer>;
  /** Resolves when at least n requests arrived. */
  waitForCount(n: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const hanging = new Set<http.ServerResponse>();
  const waiters: Array<() => void> = [];
  const receiver: Receiver = {
    url: '',
    port: 0,
    requests: [],
    answer: () => ({ status: 200 }),
    async waitForCount(n, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (receiver.requests.length < n) {
        if (Date.now() > deadline) throw new Error(`receiver got ${receiver.requests.length} requests, expected ${n}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50);
        });
      }
      return receiver.requests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const record: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        raw: Buffer.concat(chunks),
        at: Date.now(),
      };
      receiver.requests.push(record);
      waiters.splice(0).forEach((w) => w());
      const answered = receiver.answer(record);
      if (answered instanceof Promise) void answered.then(reply);
      else reply(answered);
    });
    const reply = (answer: Answer) => {
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      if (answer === 'reset') {
        req.socket.destroy();
        return;
      }
      res.writeHead(answer.status, answer.headers);
      res.end(answer.body ?? 'ok');
    };
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}/hook`;
  return receiver;
}

/** A relay and a receiver for the tests of one describe(), started before and stopped after them. */
export function relayAndReceiver(options?: TestRelayOptions): { t: TestRelay; receiver: Receiver } {
  const env = {} as { t: TestRelay; receiver: Receiver };
  before(async () => {
    [env.t, env.receiver] = await Promise.all([startTestRelay(options), startReceiver()]);
  });
  after(async () => {
    await env.receiver?.close();
    await env.t?.stop();
  });
  return env;
}

export async function createEndpoint(t: TestRelay, url: string, events: string[] = ['email.queued'], projectId = t.projectId) {
  const res = await t.admin('POST', `/admin/v1/projects/${projectId}/webhooks`, { url, events });
  assert.equal(res.status, 201, res.text);
  return res.body as { id: string; secret: string; url: string; events: string[] };
}

/** One entry of GET /admin/v1/webhooks/{id}/deliveries: the stored attempt and when the next is due. */
export type AttemptView = Omit<AttemptRow, 'pending_next_at'> & { next_attempt_at: string | null };

/**
 * Writes an endpoint straight into the database, past the creation-time checks: as if its URL had
 * passed them then (a name that resolved publicly) and the world changed since.
 */
export async function insertEndpointRow(t: TestRelay, id: string, url: string, secret = 'whsec_x'): Promise<void> {
  const { db, secrets, clock } = t.relay.services;
  await db.write((tx) =>
    tx.run('INSERT INTO webhooks (id, project_id, url, events_json, secret_enc, created_at) VALUES (?, ?, ?, ?, ?, ?)', [
      id,
      t.projectId,
      url,
      '["*"]',
      secrets.seal(secret),
      clock.iso(),
    ]),
  );
}

/** What the admin helpers below need: a relay restarted on the same data directory has it too. */
export type AdminClient = Pick<TestRelay, 'admin'>;

export async function deliveries(t: AdminClient, webhookId: string): Promise<AttemptView[]> {
  const res = await t.admin('GET', `/admin/v1/webhooks/${webhookId}/deliveries`);
  assert.equal(res.status, 200, res.text);
  return res.body.deliveries;
}

/** Polls the deliveries list until `n` attempts are recorded. */
export async function waitForAttempts(t: AdminClient, webhookId: string, n: number, timeoutMs = 10_000): Promise<AttemptView[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const list = await deliveries(t, webhookId);
    if (list.length >= n) return list;
    if (Date.now() > deadline) throw new Error(`expected ${n} attempts, have ${list.length}: ${JSON.stringify(list)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export async function advanceClock(t: AdminClient, seconds: number): Promise<void> {
  const res = await t.admin('POST', '/admin/v1/clock/advance', { seconds });
  assert.equal(res.status, 200, res.text);
}

/**
 * What a test waits on before asserting that nothing (more) was sent, instead of a sleep: an
 * endpoint in a project of its own and, on each pass(), an email there whose email.queued only that
 * endpoint receives. The dispatcher sends due deliveries oldest first across endpoints, so once the
 * barrier's attempt is recorded, every delivery due when pass() was called has been sent (in that
 * scan at the latest, whose requests leave in order).
 */
export interface WebhookBarrier {
  /** Through the relay the barrier was made on, or the one restarted on its data since. */
  pass(relay?: RelayAt): Promise<void>;
  close(): Promise<void>;
}

/** A relay as the barrier reaches it: its public URL and the admin API. */
export type RelayAt = AdminClient & Pick<TestRelay, 'url'>;

export async function startWebhookBarrier(t: TestRelay): Promise<WebhookBarrier> {
  const project = await createProjectWithKey(t);
  const receiver = await startReceiver();
  const hook = await createEndpoint(t, receiver.url, ['email.queued'], project.projectId);
  let passes = 0;
  return {
    async pass(relay = t) {
      const body = { from: `Barrier <barrier@${project.domain}>`, to: `user@${project.domain}`, subject: 'Barrier', text: 'Barrier' };
      const sent = await call(relay.url, 'POST', '/v1/emails', { token: project.key, body });
      assert.equal(sent.status, 202, sent.text);
      await waitForAttempts(relay, hook.id, ++passes);
    },
    close: () => receiver.close(),
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
