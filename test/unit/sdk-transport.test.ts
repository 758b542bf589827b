/**
 * The SDK's HTTP behaviour against a stand-in server (node:http on port 0, scripted per test):
 * idempotency keys, retries and backoff, time-outs, aborts, the error factory, pagination,
 * withResponse and logging.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import {
  AbortError,
  APIError,
  AuthenticationError,
  ConnectionError,
  DomainNotVerifiedError,
  IdempotencyConflictError,
  InternalServerError,
  InvalidRequestError,
  MessageTooLargeError,
  MethodNotAllowedError,
  NotFoundError,
  PermissionError,
  ProductionNotEnabledError,
  QuotaExceededError,
  RateLimitError,
  Raven,
  RavenAdmin,
  RavenError,
  ServiceUnavailableError,
  WaitTimeoutError,
  TestRecipientNotAllowedError,
  TimeoutError,
  ValidationError,
  type ClientOptions,
  type EmailSummary,
  type Logger,
  type SendEmailParams,
} from '../../sdk/index.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}
type Handler = (req: Seen, res: ServerResponse) => void;

let server: Server;
let baseUrl: string;
let seen: Seen[] = [];
let handler: Handler = (_req, res) => json(res, 500, {});
let requestCounter = 0;

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${++requestCounter}`, ...headers });
  res.end(JSON.stringify(body));
}

function apiError(res: ServerResponse, status: number, code: string, extra: Record<string, unknown> = {}, headers = {}) {
  json(res, status, { error: { code, message: `${code} happened`, ...extra } }, headers);
}

/** Replies with the handlers in order, one per request; the last one repeats. */
function script(...handlers: Handler[]): void {
  let i = 0;
  handler = (req, res) => handlers[Math.min(i++, handlers.length - 1)]!(req, res);
}

before(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const s: Seen = { method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString() };
      seen.push(s);
      try {
        handler(s, res);
      } catch (err) {
        json(res, 599, { error: { code: 'test_handler_bug', message: String(err) } });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  seen = [];
});

/** Retry waits are recorded instead of slept. */
let sleeps: number[] = [];
const clients: Array<Raven | RavenAdmin> = [];
function client(options: ClientOptions = {}): Raven {
  sleeps = [];
  const raven = new Raven({
    apiKey: 'rr_test_secretvalue',
    baseUrl,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    ...options,
  });
  clients.push(raven);
  return raven;
}
after(async () => {
  await Promise.all(clients.map((c) => c.close()));
});

const EMAIL: SendEmailParams = { from: 'a@example.test', to: 'b@example.test', subject: 'Hi', text: 'Hello' };
const queued: Handler = (_q, res) => json(res, 202, { id: 'em_1', status: 'queued', test_mode: true });

describe('construction', () => {
  test('an api key is required; RAVEN_API_KEY and RAVEN_BASE_URL are read', async () => {
    const saved = { key: process.env.RAVEN_API_KEY, url: process.env.RAVEN_BASE_URL };
    try {
      delete process.env.RAVEN_API_KEY;
      assert.throws(() => new Raven(), (e: unknown) => e instanceof RavenError && /missing api key/.test(e.message));
      process.env.RAVEN_API_KEY = 'rr_test_fromenv';
      process.env.RAVEN_BASE_URL = `${baseUrl}/`;
      const raven = new Raven();
      assert.equal(raven.baseUrl, baseUrl);
      script(queued);
      await raven.emails.send(EMAIL);
      assert.equal(seen[0]!.headers.authorization, 'Bearer rr_test_fromenv');
      await raven.close();
    } finally {
      for (const [name, value] of [
        ['RAVEN_API_KEY', saved.key],
        ['RAVEN_BASE_URL', saved.url],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  test('the default base URL is the local relay', () => {
    const saved = process.env.RAVEN_BASE_URL;
    delete process.env.RAVEN_BASE_URL;
    try {
      assert.equal(new Raven({ apiKey: 'rr_test_x' }).baseUrl, 'http://127.0.0.1:7700');
    } finally {
      if (saved !== undefined) process.env.RAVEN_BASE_URL = saved;
    }
  });
});

describe('emails.send', () => {
  test('posts JSON with auth, user agent and a generated UUID Idempotency-Key', async () => {
    script(queued);
    const result = await client().emails.send(EMAIL);
    assert.deepEqual(result, { id: 'em_1', status: 'queued', test_mode: true });
    const req = seen[0]!;
    assert.equal(req.method, 'POST');
    assert.equal(req.url, '/v1/emails');
    assert.equal(req.headers.authorization, 'Bearer rr_test_secretvalue');
    assert.equal(req.headers['content-type'], 'application/json');
    assert.match(String(req.headers['user-agent']), /^raven-node\/\S+ node\/v\d+/);
    assert.match(String(req.headers['idempotency-key']), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(req.headers['raven-retry-count'], undefined);
    assert.deepEqual(JSON.parse(req.body), EMAIL);
  });

  test('each call gets its own key', async () => {
    script(queued);
    const raven = client();
    await raven.emails.send(EMAIL);
    await raven.emails.send(EMAIL);
    assert.notEqual(seen[0]!.headers['idempotency-key'], seen[1]!.headers['idempotency-key']);
  });

  test('the same key and body go out on every retry, with Raven-Retry-Count', async () => {
    script(
      (_q, res) => apiError(res, 503, 'service_unavailable'),
      (_q, res) => apiError(res, 500, 'internal_error'),
      queued,
    );
    const { data, idempotencyKey } = await client().emails.send(EMAIL).withResponse();
    assert.equal(data.id, 'em_1');
    assert.equal(seen.length, 3);
    const keys = new Set(seen.map((s) => s.headers['idempotency-key']));
    assert.equal(keys.size, 1);
    assert.equal(idempotencyKey, seen[0]!.headers['idempotency-key']);
    assert.deepEqual(new Set(seen.map((s) => s.body)).size, 1);
    assert.deepEqual(
      seen.map((s) => s.headers['raven-retry-count']),
      [undefined, '1', '2'],
    );
  });

  test("the caller's idempotency key is used and reported by withResponse", async () => {
    script((_q, res) => apiError(res, 503, 'service_unavailable'), queued);
    const r = await client().emails.send(EMAIL, { idempotencyKey: 'order-42-receipt' }).withResponse();
    assert.equal(r.idempotencyKey, 'order-42-receipt');
    assert.deepEqual(
      seen.map((s) => s.headers['idempotency-key']),
      ['order-42-receipt', 'order-42-receipt'],
    );
  });

  test('a suppressed admission (200) resolves like a queued one', async () => {
    script((_q, res) => json(res, 200, { id: 'em_2', status: 'suppressed', reason: 'hard_bounce' }));
    const result = await client().emails.send(EMAIL);
    assert.equal(result.status, 'suppressed');
    if (result.status === 'suppressed') assert.equal(result.reason, 'hard_bounce');
  });
});

describe('retries', () => {
  test('backoff starts at 0.5 s and doubles, with at most 25% jitter down', async () => {
    script((_q, res) => apiError(res, 503, 'service_unavailable'));
    await assert.rejects(client({ maxRetries: 4 }).emails.send(EMAIL), ServiceUnavailableError);
    assert.equal(seen.length, 5);
    assert.equal(sleeps.length, 4);
    [500, 1000, 2000, 4000].forEach((base, i) => {
      assert.ok(sleeps[i]! <= base && sleeps[i]! >= base * 0.75, `retry ${i + 1} waited ${sleeps[i]} ms`);
    });
  });

  test('backoff is capped at 8 s', async () => {
    script((_q, res) => apiError(res, 500, 'internal_error'));
    await assert.rejects(client({ maxRetries: 6 }).emails.get('em_1'), InternalServerError);
    assert.ok(sleeps.slice(4).every((ms) => ms <= 8000 && ms >= 6000), String(sleeps));
  });

  test('429 rate_limit_exceeded honours Retry-After', async () => {
    script(
      (_q, res) => apiError(res, 429, 'rate_limit_exceeded', { retry_after: 1 }, { 'retry-after': '1' }),
      (_q, res) => apiError(res, 429, 'rate_limit_exceeded', { retry_after: 3 }, { 'retry-after': '3' }),
      queued,
    );
    const result = await client().emails.send(EMAIL);
    assert.equal(result.id, 'em_1');
    assert.deepEqual(sleeps, [1000, 3000]);
  });

  test('error.retry_after is used when the header is absent; Retry-After 0 retries at once', async () => {
    script(
      (_q, res) => apiError(res, 503, 'service_unavailable', { retry_after: 2 }),
      (_q, res) => apiError(res, 503, 'service_unavailable', {}, { 'retry-after': '0' }),
      queued,
    );
    await client().emails.send(EMAIL);
    assert.deepEqual(sleeps, [2000, 0]);
  });

  test('with the real sleep, a Retry-After of 0 costs no time', async () => {
    script((_q, res) => apiError(res, 429, 'rate_limit_exceeded', {}, { 'retry-after': '0' }), queued);
    const raven = new Raven({ apiKey: 'rr_test_x', baseUrl });
    clients.push(raven);
    const started = Date.now();
    await raven.emails.send(EMAIL);
    assert.equal(seen.length, 2);
    assert.ok(Date.now() - started < 1000);
  });

  test('a Retry-After over 60 s is not waited for: the error comes back at once', async () => {
    script((_q, res) => apiError(res, 429, 'rate_limit_exceeded', { retry_after: 61 }, { 'retry-after': '61' }));
    const err = await client().emails.send(EMAIL).then(
      () => assert.fail('should reject'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof RateLimitError);
    assert.equal(err.retryAfter, 61);
    assert.equal(seen.length, 1);
    assert.deepEqual(sleeps, []);
  });

  test('quota_exceeded is never retried', async () => {
    script((_q, res) => apiError(res, 429, 'quota_exceeded', { retry_after: 86400 }, { 'retry-after': '86400' }));
    const err = await client().emails.send(EMAIL).catch((e: unknown) => e);
    assert.ok(err instanceof QuotaExceededError);
    assert.ok(!(err instanceof RateLimitError));
    assert.equal(err.status, 429);
    assert.equal(err.retryAfter, 86400);
    assert.equal(seen.length, 1);
  });

  for (const [status, code] of [
    [422, 'validation_error'],
    [409, 'idempotency_conflict'],
    [400, 'invalid_request'],
    [401, 'invalid_api_key'],
    [404, 'not_found'],
  ] as const) {
    test(`${status} ${code} is not retried`, async () => {
      script((_q, res) => apiError(res, status, code));
      await assert.rejects(client().emails.send(EMAIL), APIError);
      assert.equal(seen.length, 1);
    });
  }

  test('408 is retried', async () => {
    script((_q, res) => json(res, 408, { error: { code: 'request_timeout', message: 'slow' } }), queued);
    await client().emails.send(EMAIL);
    assert.equal(seen.length, 2);
  });

  test('408 wait_timeout is the answer to a wait, never retried', async () => {
    script((_q, res) => apiError(res, 408, 'wait_timeout'), queued);
    await assert.rejects(client().emails.send(EMAIL), WaitTimeoutError);
    assert.equal(seen.length, 1);
  });

  test('maxRetries 0 disables retries; the per-call option overrides the client', async () => {
    script((_q, res) => apiError(res, 503, 'service_unavailable'));
    await assert.rejects(client({ maxRetries: 0 }).emails.send(EMAIL), ServiceUnavailableError);
    assert.equal(seen.length, 1);
    seen = [];
    await assert.rejects(client({ maxRetries: 0 }).emails.send(EMAIL, { maxRetries: 1 }), ServiceUnavailableError);
    assert.equal(seen.length, 2);
  });

  test('after the last retry the last error is thrown', async () => {
    script((_q, res) => apiError(res, 503, 'service_unavailable'));
    await assert.rejects(client().emails.get('em_1'), ServiceUnavailableError);
    assert.equal(seen.length, 3);
  });

  test('a refused connection is a ConnectionError, and is retried', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const raven = client({ baseUrl: `http://127.0.0.1:${port}` });
    const err = await raven.emails.send(EMAIL).catch((e: unknown) => e);
    assert.ok(err instanceof ConnectionError && !(err instanceof TimeoutError), String(err));
    assert.match(err.message, /ECONNREFUSED/);
    assert.equal(sleeps.length, 2);
  });
});

describe('time-outs and aborts', () => {
  test('an attempt over the timeout fails with TimeoutError and is retried', async () => {
    script(() => {}); // never answers
    const started = Date.now();
    // Long enough for the retry to reach this server on a loaded machine before it times out too.
    const err = await client({ timeout: 300, maxRetries: 1 }).emails.get('em_1').catch((e: unknown) => e);
    assert.ok(err instanceof TimeoutError, String(err));
    assert.ok(err instanceof ConnectionError);
    assert.equal(seen.length, 2);
    assert.ok(Date.now() - started < 2000);
  });

  test('the per-call timeout wins', async () => {
    script(() => {});
    const err = await client({ timeout: 60_000, maxRetries: 0 })
      .emails.send(EMAIL, { timeout: 30 })
      .catch((e: unknown) => e);
    assert.ok(err instanceof TimeoutError);
  });

  test('a slow body also times out', async () => {
    script((_q, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"emails":');
    });
    const err = await client({ timeout: 80, maxRetries: 0 }).emails.list().catch((e: unknown) => e);
    assert.ok(err instanceof TimeoutError, String(err));
  });

  test('aborting in flight rejects with AbortError carrying the reason, and is not retried', async () => {
    // Aborted once the server holds the request (not after a fixed delay, which a busy machine outruns).
    const controller = new AbortController();
    script(() => controller.abort(new Error('user gave up')));
    const promise = client().emails.send(EMAIL, { signal: controller.signal });
    const err = await promise.catch((e: unknown) => e);
    assert.ok(err instanceof AbortError, String(err));
    assert.ok(err instanceof RavenError);
    assert.equal(err.name, 'AbortError');
    assert.equal((err.cause as Error).message, 'user gave up');
    assert.equal(seen.length, 1);
    assert.deepEqual(sleeps, []);
  });

  test('an already aborted signal sends nothing', async () => {
    const err = await client()
      .emails.get('em_1', { signal: AbortSignal.abort() })
      .catch((e: unknown) => e);
    assert.ok(err instanceof AbortError);
    assert.equal(seen.length, 0);
  });

  test('aborting during the wait before a retry stops at once', async () => {
    const controller = new AbortController();
    // Aborted once the 503 has gone out (not on a timer from the start: a slow first round trip
    // on a loaded machine would make that an abort before any request).
    script((_q, res) => {
      res.on('finish', () => setTimeout(() => controller.abort(), 50));
      apiError(res, 503, 'service_unavailable', {}, { 'retry-after': '30' });
    });
    const raven = new Raven({ apiKey: 'rr_test_x', baseUrl }); // real sleep
    clients.push(raven);
    const started = Date.now();
    const promise = raven.emails.send(EMAIL, { signal: controller.signal });
    await assert.rejects(promise, AbortError);
    // This client's requests only: a late request of an earlier test's client may land here too.
    assert.equal(seen.filter((r) => r.headers.authorization === 'Bearer rr_test_x').length, 1);
    assert.ok(Date.now() - started < 2000);
  });
});

describe('errors', () => {
  const cases: Array<[number, string, new (...args: never[]) => APIError]> = [
    [400, 'invalid_request', InvalidRequestError],
    [401, 'invalid_api_key', AuthenticationError],
    [401, 'unauthorized', AuthenticationError],
    [403, 'forbidden', PermissionError],
    [403, 'production_not_enabled', ProductionNotEnabledError],
    [404, 'not_found', NotFoundError],
    [405, 'method_not_allowed', MethodNotAllowedError],
    [409, 'idempotency_conflict', IdempotencyConflictError],
    [413, 'message_too_large', MessageTooLargeError],
    [422, 'validation_error', ValidationError],
    [422, 'domain_not_verified', DomainNotVerifiedError],
    [422, 'test_recipient_not_allowed', TestRecipientNotAllowedError],
    [429, 'rate_limit_exceeded', RateLimitError],
    [429, 'quota_exceeded', QuotaExceededError],
    [500, 'internal_error', InternalServerError],
    [503, 'service_unavailable', ServiceUnavailableError],
  ];
  for (const [status, code, Class] of cases) {
    test(`${status} ${code} -> ${Class.name}`, async () => {
      script((_q, res) => apiError(res, status, code, {}, { 'x-extra': 'yes' }));
      const err = await client({ maxRetries: 0 }).emails.get('em_1').catch((e: unknown) => e);
      assert.ok(err instanceof Class, `got ${String(err)}`);
      assert.ok(err instanceof APIError && err instanceof RavenError);
      assert.equal(err.status, status);
      assert.equal(err.code, code);
      assert.equal(err.message, `${code} happened`);
      assert.match(String(err.requestId), /^req_\d+$/);
      assert.equal(err.headers['x-extra'], 'yes');
      assert.equal(err.name, Class.name);
    });
  }

  test('validation details are exposed', async () => {
    const details = [{ field: 'to[3]', message: 'not an address' }];
    script((_q, res) => apiError(res, 422, 'validation_error', { details }));
    const err = await client().emails.send(EMAIL).catch((e: unknown) => e);
    assert.ok(err instanceof ValidationError);
    assert.deepEqual(err.details, details);
    assert.deepEqual(err.body, { error: { code: 'validation_error', message: 'validation_error happened', details } });
  });

  test('an unknown code falls back to the class of its status', async () => {
    script((_q, res) => apiError(res, 404, 'brand_new_code'));
    const err = await client().emails.get('em_1').catch((e: unknown) => e);
    assert.ok(err instanceof NotFoundError);
    assert.equal(err.code, 'brand_new_code');
    script((_q, res) => apiError(res, 418, 'teapot'));
    const other = await client().emails.get('em_1').catch((e: unknown) => e);
    assert.equal((other as Error).constructor, APIError);
  });

  test('a non-JSON error body (a proxy page) still gives a typed error', async () => {
    script((_q, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<h1>Bad gateway</h1>');
    });
    const err = await client({ maxRetries: 0 }).emails.get('em_1').catch((e: unknown) => e);
    assert.ok(err instanceof InternalServerError);
    assert.equal(err.code, null);
    assert.equal(err.requestId, null);
    assert.equal(err.body, '<h1>Bad gateway</h1>');
  });
});

function emailsServer(total: number): Handler {
  const all: EmailSummary[] = Array.from({ length: total }, (_, i) => ({
    id: `em_${String(total - i).padStart(3, '0')}`,
    status: 'sent',
    from: 'a@example.test',
    to: ['b@example.test'],
    cc: [],
    subject: `#${total - i}`,
    tags: {},
    test_mode: true,
    created_at: '2026-11-22T10:00:00.000Z',
  }));
  return (req, res) => {
    const url = new URL(req.url, 'http://x');
    const limit = Number(url.searchParams.get('limit') ?? 50);
    const start = Number(url.searchParams.get('cursor') ?? 0);
    const page = all.slice(start, start + limit);
    const next = start + limit < all.length ? String(start + limit) : null;
    json(res, 200, { emails: page, next_cursor: next });
  };
}

describe('pagination', () => {
  test('await gives the first page; emails and data are the same array', async () => {
    script(emailsServer(5));
    const page = await client().emails.list({ limit: 2, status: 'sent', recipient: 'b@example.test' });
    assert.equal(page.data.length, 2);
    assert.equal(page.emails, page.data);
    assert.equal(page.next_cursor, '2');
    assert.equal(page.hasNextPage(), true);
    const url = new URL(seen[0]!.url, 'http://x');
    assert.equal(url.pathname, '/v1/emails');
    assert.deepEqual(Object.fromEntries(url.searchParams), { status: 'sent', recipient: 'b@example.test', limit: '2' });
    assert.deepEqual(JSON.parse(JSON.stringify(page)), { emails: page.data, next_cursor: '2' });
  });

  test('getNextPage follows next_cursor and keeps the filters', async () => {
    script(emailsServer(5));
    const first = await client().emails.list({ limit: 2, status: 'sent' });
    const second = await first.getNextPage();
    const third = await second.getNextPage();
    assert.deepEqual(
      [first, second, third].map((p) => p.emails.map((e) => e.id)),
      [['em_005', 'em_004'], ['em_003', 'em_002'], ['em_001']],
    );
    assert.equal(third.next_cursor, null);
    assert.equal(third.hasNextPage(), false);
    await assert.rejects(third.getNextPage(), RavenError);
    const last = new URL(seen[2]!.url, 'http://x').searchParams;
    assert.equal(last.get('cursor'), '4');
    assert.equal(last.get('status'), 'sent');
    assert.equal(last.get('limit'), '2');
  });

  test('for await over list() yields every email across pages', async () => {
    script(emailsServer(7));
    const ids: string[] = [];
    for await (const email of client().emails.list({ limit: 3 })) ids.push(email.id);
    assert.deepEqual(ids, ['em_007', 'em_006', 'em_005', 'em_004', 'em_003', 'em_002', 'em_001']);
    assert.equal(seen.length, 3);
  });

  test('for await over a page yields it and the pages after it', async () => {
    script(emailsServer(5));
    const second = await (await client().emails.list({ limit: 2 })).getNextPage();
    const ids: string[] = [];
    for await (const email of second) ids.push(email.id);
    assert.deepEqual(ids, ['em_003', 'em_002', 'em_001']);
  });

  test('an empty listing iterates nothing', async () => {
    script(emailsServer(0));
    const ids: string[] = [];
    for await (const email of client().emails.list()) ids.push(email.id);
    assert.deepEqual(ids, []);
    assert.equal(seen.length, 1);
  });

  test('list().withResponse() gives the page and the response', async () => {
    script(emailsServer(1));
    const { data, response } = await client().emails.list().withResponse();
    assert.equal(data.emails.length, 1);
    assert.equal(response.status, 200);
    assert.match(String(response.requestId), /^req_/);
  });
});

describe('withResponse and get', () => {
  test('send().withResponse() gives data, status, headers, requestId and the key', async () => {
    script((_q, res) => json(res, 202, { id: 'em_9', status: 'queued', test_mode: false }, { 'request-id': 'req_abc' }));
    const r = await client().emails.send(EMAIL).withResponse();
    assert.deepEqual(r.data, { id: 'em_9', status: 'queued', test_mode: false });
    assert.equal(r.response.status, 202);
    assert.equal(r.response.requestId, 'req_abc');
    assert.equal(r.response.headers['content-type'], 'application/json');
    assert.equal(r.idempotencyKey, seen[0]!.headers['idempotency-key']);
  });

  test('get() encodes the id and withResponse() has no idempotency key', async () => {
    script((_q, res) => json(res, 200, { id: 'em/1' }));
    const r = await client().emails.get('em/1 x').withResponse();
    assert.equal(seen[0]!.url, '/v1/emails/em%2F1%20x');
    assert.equal(seen[0]!.headers['idempotency-key'], undefined);
    assert.equal('idempotencyKey' in r, false);
  });

  test('get() with an empty id rejects without a request', async () => {
    await assert.rejects(client().emails.get(''), RavenError);
    assert.equal(seen.length, 0);
  });

  test('an APIPromise is a Promise; then/catch/finally work', async () => {
    script((_q, res) => json(res, 200, { id: 'em_1' }));
    const p = client().emails.get('em_1');
    assert.ok(p instanceof Promise);
    let finalized = false;
    const id = await p.then((d) => d.id).finally(() => (finalized = true));
    assert.equal(id, 'em_1');
    assert.ok(finalized);
    assert.equal(seen.length, 1, 'awaiting twice does not send twice');
    await p;
    assert.equal(seen.length, 1);
  });

  test('defaultHeaders and per-call headers are sent; they cannot replace Authorization', async () => {
    script((_q, res) => json(res, 200, { id: 'em_1' }));
    await client({ defaultHeaders: { 'X-Team': 'mail', Authorization: 'Bearer nope' }, userAgent: 'my-app/1' }).emails.get(
      'em_1',
      { headers: { 'X-Call': '1' } },
    );
    const h = seen[0]!.headers;
    assert.equal(h['x-team'], 'mail');
    assert.equal(h['x-call'], '1');
    assert.equal(h['user-agent'], 'my-app/1');
    assert.equal(h.authorization, 'Bearer rr_test_secretvalue');
  });
});

describe('logging', () => {
  function capture(): { logger: Logger; lines: string[] } {
    const lines: string[] = [];
    const push = (level: string) => (msg: string, data?: Record<string, unknown>) =>
      lines.push(`${level} ${msg} ${JSON.stringify(data)}`);
    return { logger: { error: push('error'), warn: push('warn'), info: push('info'), debug: push('debug') }, lines };
  }

  test('silent by default', async () => {
    const { logger, lines } = capture();
    script((_q, res) => apiError(res, 503, 'service_unavailable'), queued);
    await client({ logger }).emails.send(EMAIL);
    assert.deepEqual(lines, []);
  });

  test('debug logs requests, responses and retries, never the api key', async () => {
    const { logger, lines } = capture();
    script((_q, res) => apiError(res, 503, 'service_unavailable'), queued);
    await client({ logger, logLevel: 'debug' }).emails.send(EMAIL);
    assert.ok(lines.some((l) => l.startsWith('debug request')));
    assert.ok(lines.some((l) => l.startsWith('info response')));
    assert.ok(lines.some((l) => l.startsWith('warn retrying request')));
    assert.ok(lines.some((l) => l.includes('[redacted]')));
    assert.ok(!lines.some((l) => l.includes('secretvalue')), lines.join('\n'));
  });

  test('warn shows only retries', async () => {
    const { logger, lines } = capture();
    script((_q, res) => apiError(res, 503, 'service_unavailable'), queued);
    await client({ logger, logLevel: 'warn' }).emails.send(EMAIL);
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /^warn retrying request/);
  });
});

describe('RavenAdmin', () => {
  function admin(): RavenAdmin {
    sleeps = [];
    const a = new RavenAdmin({
      adminToken: 'admintoken',
      baseUrl,
      sleep: async (ms) => {
        sleeps.push(ms);
      },
    });
    clients.push(a);
    return a;
  }

  test('an admin token is required', () => {
    const saved = process.env.RAVEN_ADMIN_TOKEN;
    delete process.env.RAVEN_ADMIN_TOKEN;
    try {
      assert.throws(() => new RavenAdmin({ baseUrl }), /missing admin token/);
    } finally {
      if (saved !== undefined) process.env.RAVEN_ADMIN_TOKEN = saved;
    }
  });

  test('methods map to /admin/v1 paths with the admin token', async () => {
    script((req, res) => {
      if (req.method === 'DELETE') {
        res.writeHead(204, { 'request-id': 'req_x' });
        res.end();
      } else json(res, req.method === 'POST' ? 201 : 200, { ok: true });
    });
    const a = admin();
    await a.workspaces.create({ name: 'Acme' });
    await a.workspaces.list();
    await a.workspaces.activate('ws_1');
    await a.projects.create('ws_1', { name: 'p', environment: 'production' });
    await a.projects.list('ws_1');
    await a.domains.create('prj_1', { name: 'example.test' });
    await a.domains.list('prj_1');
    await a.domains.verify('dom_1', { force: true });
    await a.keys.create('prj_1', { name: 'k', permission: 'email:send' });
    await a.keys.list('prj_1');
    assert.equal(await a.keys.revoke('key_1'), undefined);
    await a.suppressions.list('ws_1');
    await a.suppressions.create('ws_1', { email: 'x@example.test', reason: 'manual' });
    await a.suppressions.delete('ws_1', 'x+y@example.test');
    await a.webhooks.create('prj_1', { url: 'https://hooks.example.test/raven', events: ['*'] });
    await a.webhooks.list('prj_1');
    await a.webhooks.delete('whk_1');
    await a.webhooks.deliveries('whk_1');
    await a.usage('ws_1');
    await a.messages.list({ to: 'b@example.test', limit: 5 });
    await a.messages.get('msg_1');
    await a.messages.clear();
    await a.clock.get();
    await a.clock.advance(3600);
    assert.deepEqual(
      seen.map((s) => `${s.method} ${s.url}${s.body ? ' ' + s.body : ''}`),
      [
        'POST /admin/v1/workspaces {"name":"Acme"}',
        'GET /admin/v1/workspaces',
        'POST /admin/v1/workspaces/ws_1/activate',
        'POST /admin/v1/workspaces/ws_1/projects {"name":"p","environment":"production"}',
        'GET /admin/v1/workspaces/ws_1/projects',
        'POST /admin/v1/projects/prj_1/domains {"name":"example.test"}',
        'GET /admin/v1/projects/prj_1/domains',
        'POST /admin/v1/domains/dom_1/verify {"force":true}',
        'POST /admin/v1/projects/prj_1/keys {"name":"k","permission":"email:send"}',
        'GET /admin/v1/projects/prj_1/keys',
        'DELETE /admin/v1/keys/key_1',
        'GET /admin/v1/workspaces/ws_1/suppressions',
        'POST /admin/v1/workspaces/ws_1/suppressions {"email":"x@example.test","reason":"manual"}',
        'DELETE /admin/v1/workspaces/ws_1/suppressions/x%2By%40example.test',
        'POST /admin/v1/projects/prj_1/webhooks {"url":"https://hooks.example.test/raven","events":["*"]}',
        'GET /admin/v1/projects/prj_1/webhooks',
        'DELETE /admin/v1/webhooks/whk_1',
        'GET /admin/v1/webhooks/whk_1/deliveries',
        'GET /admin/v1/workspaces/ws_1/usage',
        'GET /admin/v1/messages?to=b%40example.test&limit=5',
        'GET /admin/v1/messages/msg_1',
        'DELETE /admin/v1/messages',
        'GET /admin/v1/clock',
        'POST /admin/v1/clock/advance {"seconds":3600}',
      ],
    );
    assert.ok(seen.every((s) => s.headers.authorization === 'Bearer admintoken'));
    assert.ok(seen.every((s) => s.headers['idempotency-key'] === undefined));
  });

  test('messages.raw returns the message source as text', async () => {
    const raw = 'From: a@example.test\r\nSubject: Hi\r\n\r\nHello\r\n';
    script((_q, res) => {
      res.writeHead(200, { 'content-type': 'message/rfc822' });
      res.end(raw);
    });
    assert.equal(await admin().messages.raw('msg_1'), raw);
    assert.match(String(seen[0]!.headers.accept), /message\/rfc822/);
  });

  test('a non-idempotent admin POST is not retried after a 5xx, a GET is', async () => {
    script((_q, res) => apiError(res, 503, 'service_unavailable'));
    const a = admin();
    await assert.rejects(a.clock.advance(60), ServiceUnavailableError);
    assert.equal(seen.length, 1);
    seen = [];
    await assert.rejects(a.clock.get(), ServiceUnavailableError);
    assert.equal(seen.length, 3);
  });

  test('an admin 401 unauthorized is an AuthenticationError', async () => {
    script((_q, res) => apiError(res, 401, 'unauthorized'));
    await assert.rejects(admin().workspaces.list(), AuthenticationError);
  });
});
