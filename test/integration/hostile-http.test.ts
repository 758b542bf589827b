// Hostile HTTP input: each case gets the contract's error and the relay keeps serving, the same
// answer on SQLite and PostgreSQL (npm test runs this file on both).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { buildRoutes } from '../../relay/http/routes.js';
import type { Route } from '../../relay/http/router.js';
import { spec } from '../helpers/contract.js';
import { exchange as rawExchange } from '../helpers/raw-http.js';
import { call, startTestRelay, type TestRelay } from '../helpers/start-relay.js';

let t: TestRelay;
before(async () => {
  t = await startTestRelay({ flags: { testClock: true, allowLocalWebhooks: true } });
});
after(async () => {
  await t.stop();
});

function raw(body: Buffer | string, headers: http.OutgoingHttpHeaders = {}): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${t.url}/v1/emails`,
      { method: 'POST', headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json', ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const valid = () => ({ from: `a@${t.domain}`, to: `b@${t.domain}`, subject: 's', text: 't' });

test('repeated Authorization or Idempotency-Key headers are 400 invalid_request', async () => {
  // Node sends an array value as repeated header lines.
  const repeated = [{ authorization: [`Bearer ${t.apiKey}`, `Bearer ${t.apiKey}`] }, { 'idempotency-key': ['a', 'b'] }] as unknown as http.OutgoingHttpHeaders[];
  for (const headers of repeated) {
    const res = await raw(JSON.stringify(valid()), headers);
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body.error.code, 'invalid_request');
  }
});

test('invalid UTF-8, lone surrogates and deep nesting are 400; __proto__ is plain data', async () => {
  const invalidUtf8 = Buffer.concat([Buffer.from('{"from":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
  assert.equal((await raw(invalidUtf8)).status, 400);
  assert.equal((await raw('{"subject":"\\ud800"}')).status, 400);
  assert.equal((await raw(`${'['.repeat(5000)}${']'.repeat(5000)}`)).status, 400);
  const proto = await raw(`{"from":"a@${t.domain}","to":"b@${t.domain}","subject":"s","text":"t","metadata":{"__proto__":"x","__proto__":"y"}}`);
  assert.equal(proto.status, 400, 'a repeated __proto__ key is a repeated key');
  const protoOnce = await raw(`{"from":"a@${t.domain}","to":"b@${t.domain}","subject":"s","text":"t","metadata":{"__proto__":"x"}}`);
  assert.equal(protoOnce.status, 202, JSON.stringify(protoOnce.body));
  assert.equal(({} as any).x, undefined);
});

test('numbers beyond 2^53 where strings belong are validation errors', async () => {
  const res = await raw(`{"from":"a@${t.domain}","to":"b@${t.domain}","subject":12345678901234567890123,"text":"t"}`);
  assert.equal(res.status, 422);
  assert.equal(res.body.error.details[0].field, 'subject');
});

// ---- Input neither backend can store (issue 20): a NUL, an unpaired surrogate, a value past a
// column's length. PostgreSQL refused such statements (500) where SQLite stored them; the domain now
// decides first, the same on both: a body field is 422 naming it, an id 404, a filter an empty page.

describe('input neither backend can store', () => {
  const NUL = 'ab%00cd';
  /** An existing id for each path parameter of the route table, so only the one under test is bad. */
  const ids: Record<string, string> = {};
  let routes: Route[];

  before(async () => {
    const socket = { upgrade: async () => {} };
    routes = buildRoutes(t.relay.services, { listenHub: socket, inboxLive: socket }, t.relay.submission);
    const sent = await t.send({ to: `reader@${t.domain}`, subject: 'ids for the sweep' });
    assert.equal(sent.status, 202, sent.text);
    const email = await t.waitForFinal(sent.body.id);
    const captured = await t.admin('GET', `/admin/v1/messages?to=${encodeURIComponent(`reader@${t.domain}`)}`);
    assert.equal(captured.body.messages.length, 1, captured.text);
    const webhook = await t.admin('POST', `/admin/v1/projects/${t.projectId}/webhooks`, { url: 'http://127.0.0.1:9/hook', events: ['*'] });
    assert.equal(webhook.status, 201, webhook.text);
    const suppressed = await t.admin('POST', `/admin/v1/workspaces/${t.workspaceId}/suppressions`, { email: `gone@${t.domain}` });
    assert.equal(suppressed.status, 201, suppressed.text);
    const bootstrap = t.relay.bootstrap!;
    Object.assign(ids, {
      email_id: sent.body.id,
      workspace_id: t.workspaceId,
      project_id: t.projectId,
      domain_id: bootstrap.domainId,
      key_id: bootstrap.keyId,
      webhook_id: webhook.body.id,
      event_id: email.events[0].id,
      email: `gone@${t.domain}`,
      message_id: captured.body.messages[0].id,
      index: '0',
      file: 'index.js',
    });
  });

  /** An id that exists for a path parameter (one the sweep does not know yet: an unknown id). */
  const existing = (name: string) => encodeURIComponent(ids[name] ?? 'no_such_id');

  /** Whether an openapi.yaml path names a parameter the sweep has no existing id for (a 404 is then fair). */
  const namesUnknownId = (path: string) => [...path.matchAll(/\{([a-z_]+)\}/g)].some((m) => ids[m[1]!] === undefined);

  /** The path with `name` set to `value` and every other parameter to an id that exists. */
  function pathWith(route: Route, name: string, value: string): string {
    return route.path.replace(/:([a-z_]+)/g, (_, n: string) => (n === name ? value : existing(n)));
  }

  /** Every (route, path parameter) pair of the relay's own route table. */
  function pathParameters(): Array<{ route: Route; name: string }> {
    return routes.filter((r) => r.handler).flatMap((route) => [...route.path.matchAll(/:([a-z_]+)/g)].map((m) => ({ route, name: m[1]! })));
  }

  const as = (path: string) => (path.startsWith('/v1/') ? t.apiKey : t.adminToken);

  async function expectNotFound(route: Route, path: string) {
    const res = await call(t.url, route.method, path, { token: as(path) });
    assert.equal(res.status, 404, `${route.method} ${path}: ${res.text}`);
    assert.equal(res.body.error.code, 'not_found', `${route.method} ${path}`);
  }

  test('regression: a NUL in any id of any path is the ordinary 404 (every route of the table, each of its ids)', async () => {
    const cases = pathParameters();
    assert.ok(cases.length >= 29, `the route table has ${cases.length} path parameters`);
    for (const { route, name } of cases) await expectNotFound(route, pathWith(route, name, NUL));
  });

  test('an unpaired surrogate (percent-encoded) or 5,000 characters in any id of any path is answered as an unknown id is', async () => {
    const answer = async (route: Route, path: string) => {
      const res = await call(t.url, route.method, path, { token: as(path) });
      return `${res.status} ${res.status >= 400 ? res.body.error.code : ''}`;
    };
    for (const { route, name } of pathParameters()) {
      const unknown = await answer(route, pathWith(route, name, 'no_such_id'));
      assert.match(unknown, /^4\d\d /, `${route.method} ${route.path} with an unknown :${name}`);
      for (const value of ['%ED%A0%80', 'x'.repeat(5000)]) {
        assert.equal(await answer(route, pathWith(route, name, value)), unknown, `${route.method} ${route.path} with :${name}=${value.slice(0, 20)}`);
      }
    }
  });

  test('without credentials a NUL id is still 401 first, as any unknown id is', async () => {
    const res = await call(t.url, 'GET', `/v1/emails/${NUL}`);
    assert.equal(res.status, 401, res.text);
    const admin = await call(t.url, 'DELETE', `/admin/v1/keys/${NUL}`);
    assert.equal(admin.status, 401, admin.text);
  });

  /** What the relay answers a request node:http cannot parse: the contract's error body and a Request-Id all the same. */
  async function unparsed(header: string, status: number): Promise<void> {
    const { text: reply } = await rawExchange(Number(new URL(t.directUrl).port), `GET /v1/emails HTTP/1.1\r\nHost: x\r\n${header}\r\nConnection: close\r\n\r\n`, { halfClose: true });
    const what = `${JSON.stringify(header.slice(0, 40))}: ${reply.slice(0, 300)}`;
    assert.match(reply, new RegExp(`^HTTP/1\\.1 ${status} `), what);
    assert.match(reply, /\r\nRequest-Id: req_\w+\r\n/, what);
    assert.match(reply, /\r\nContent-Type: application\/json\r\n/, what);
    const body = JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4));
    assert.equal(body.error.code, 'invalid_request', what);
    assert.equal(typeof body.error.message, 'string', what);
  }

  test('a NUL in a header (Idempotency-Key, Authorization, a cookie) is refused by the HTTP parser: 400 invalid_request with a Request-Id, nothing reaches storage', async () => {
    for (const header of ['Idempotency-Key: a\0b', `Authorization: Bearer ${t.apiKey}\0`, 'Cookie: raven_session=a\0b', 'A header line without a colon']) {
      await unparsed(header, 400);
    }
  });

  test('headers over 16 KiB: 431 with the contract\'s error body and a Request-Id', async () => {
    await unparsed(`X-Big: ${'a'.repeat(17 * 1024)}`, 431);
  });

  /** Every query parameter openapi.yaml declares, with its operation. */
  function queryParameters(): Array<{ method: string; path: string; name: string }> {
    const out: Array<{ method: string; path: string; name: string }> = [];
    for (const [path, item] of Object.entries<any>(spec.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        if (typeof op !== 'object' || op === null || !Array.isArray(op.parameters ?? item.parameters)) continue;
        for (const p of [...(item.parameters ?? []), ...(op.parameters ?? [])]) {
          const param = p.$ref ? p.$ref.split('/').reduce((n: any, k: string) => (k === '#' ? spec : n[k]), spec) : p;
          if (param.in === 'query') out.push({ method: method.toUpperCase(), path, name: param.name });
        }
      }
    }
    return out;
  }

  test('regression: a NUL in any query value is 200 or a 422 naming it, never a 500 (every query parameter of openapi.yaml)', async () => {
    const cases = queryParameters();
    assert.ok(cases.length >= 12, `openapi.yaml declares ${cases.length} query parameters`);
    for (const { method, path, name } of cases) {
      for (const value of [NUL, '%00', '%ED%A0%80', 'x'.repeat(5000)]) {
        // The wait is a long poll: a value that could still match waits (1 s here) and answers 408.
        const waits = path === '/admin/v1/messages/wait';
        const target = `${path.replace(/\{([a-z_]+)\}/g, (_, n: string) => existing(n))}?${name}=${value}${waits && name !== 'timeout' ? '&timeout=1' : ''}`;
        const res = await call(t.url, method, target, { token: as(target) });
        if (res.status === 404 && namesUnknownId(path)) continue;
        if (waits && res.status === 408 && res.body.error.code === 'wait_timeout') continue;
        assert.ok(res.status === 200 || res.status === 422, `${method} ${target.slice(0, 200)}: ${res.status} ${res.text.slice(0, 300)}`);
        if (res.status === 422) assert.ok(res.body.error.details.some((d: any) => d.field === name), `${method} ${path}?${name}: ${res.text}`);
      }
    }
  });

  test('regression: a filter that cannot match (a NUL) is an empty page: recipient, to, and every kind of inbox term', async () => {
    const pages: Array<[string, string, string]> = [
      ['key', `/v1/emails?recipient=${NUL}`, 'emails'],
      ['key', `/v1/emails?recipient=%00`, 'emails'],
      ['admin', `/admin/v1/projects/${t.projectId}/emails?recipient=${NUL}`, 'emails'],
      ['admin', `/admin/v1/messages?to=${NUL}`, 'messages'],
      ['admin', `/admin/v1/inbox?q=from:%00`, 'messages'],
      ['admin', `/admin/v1/inbox?q=to:${NUL}`, 'messages'],
      ['admin', `/admin/v1/inbox?q=subject:%22a%00b%22`, 'messages'],
      ['admin', `/admin/v1/inbox?q=is:%00`, 'messages'],
      ['admin', `/admin/v1/inbox?q=${NUL}`, 'messages'],
      ['admin', `/admin/v1/inbox?q=%00`, 'messages'],
    ];
    for (const [who, path, list] of pages) {
      const res = who === 'key' ? await t.api('GET', path) : await t.admin('GET', path);
      assert.equal(res.status, 200, `${path}: ${res.text}`);
      assert.deepEqual(res.body[list], [], path);
    }
  });

  test('regression: the inbox search quotes a term whatever it holds (ab%00cd was "unterminated string" on SQLite)', async () => {
    // Terms of three characters or more go to SQLite's FTS5 index as phrases.
    for (const q of ['ab%00cd', '%22%22%22', 'a%22b%22c', '*abc', 'abc*', 'NEAR(abc)', 'abc:def', '^abc', '(abc', 'a%01b%7Fc', '%F0%9F%98%80%F0%9F%98%80']) {
      const res = await t.admin('GET', `/admin/v1/inbox?q=${q}`);
      assert.equal(res.status, 200, `q=${q}: ${res.text}`);
    }
    const found = await t.admin('GET', `/admin/v1/inbox?q=${encodeURIComponent('ids for the')}`);
    assert.equal(found.body.messages.length, 1, 'an ordinary search still finds');
  });

  /** Every property of the JSON request body of every operation, with the operation. */
  function bodyProperties(): Array<{ method: string; path: string; name: string }> {
    const out: Array<{ method: string; path: string; name: string }> = [];
    const deref = (node: any): any => (node?.$ref ? deref(node.$ref.split('/').slice(1).reduce((n: any, k: string) => n[k], spec)) : node);
    for (const [path, item] of Object.entries<any>(spec.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        const schema = deref(deref(op?.requestBody)?.content?.['application/json']?.schema);
        for (const name of Object.keys(schema?.properties ?? {})) out.push({ method: method.toUpperCase(), path, name });
      }
    }
    return out;
  }

  test('regression: a NUL in any field of any request body is a 422 naming it (every body property of openapi.yaml)', async () => {
    const cases = bodyProperties();
    assert.ok(cases.length >= 20, `openapi.yaml declares ${cases.length} body properties`);
    for (const { method, path, name } of cases) {
      const target = path.replace(/\{([a-z_]+)\}/g, (_, n: string) => existing(n));
      const res = await call(t.url, method, target, { token: as(target), body: { [name]: 'ab\u0000cd' } });
      if (res.status === 404 && namesUnknownId(path)) continue;
      assert.equal(res.status, 422, `${method} ${target} {${name}}: ${res.text}`);
      assert.equal(res.body.error.code, 'validation_error');
      assert.ok(res.body.error.details.some((d: any) => d.field === name), `${method} ${path} {${name}}: ${res.text}`);
    }
  });

  test('regression: a NUL in the name of a workspace, a project or a key is a 422 naming it; too long too', async () => {
    for (const name of ['ab\u0000cd', 'n'.repeat(201)]) {
      const bodies: Array<[string, Record<string, unknown>]> = [
        ['/admin/v1/workspaces', { name }],
        [`/admin/v1/workspaces/${t.workspaceId}/projects`, { name, environment: 'development' }],
        [`/admin/v1/projects/${t.projectId}/keys`, { name, permission: 'email:send' }],
      ];
      for (const [path, body] of bodies) {
        const res = await t.admin('POST', path, body);
        assert.equal(res.status, 422, `${path}: ${res.text}`);
        assert.deepEqual(res.body.error.details.map((d: any) => d.field), ['name'], path);
      }
    }
  });

  test('a test clock advanced past what a timestamp can hold is a 422, never a 500', async () => {
    for (const seconds of [1e300, Number.MAX_SAFE_INTEGER, 400_000_000_000]) {
      const res = await t.admin('POST', '/admin/v1/clock/advance', { seconds });
      assert.equal(res.status, 422, `${seconds}: ${res.text}`);
      assert.equal(res.body.error.details[0].field, 'seconds');
    }
    const clock = await t.admin('GET', '/admin/v1/clock');
    assert.equal(clock.status, 200, clock.text);
  });

  test('regression: a body past its limit is 413 message_too_large on every admin operation that reads one, as openapi.yaml documents (it listed 413 for POST /v1/emails only)', async () => {
    const readers = Object.entries<any>(spec.paths)
      .filter(([path, item]) => path.startsWith('/admin/v1/') && item.post && (item.post.requestBody || path.endsWith('/resend')))
      .map(([path]) => path);
    assert.ok(readers.length >= 15, `openapi.yaml has ${readers.length} admin operations with a body`);
    const seen = t.violations.length;
    const body = JSON.stringify({ name: 'x'.repeat(70 * 1024) });
    for (const path of readers) {
      const target = path.replace(/\{([a-z_]+)\}/g, (_, n: string) => existing(n));
      const res = await call(t.url, 'POST', target, { token: t.adminToken, body });
      assert.equal(res.status, 413, `${path}: ${res.text}`);
      assert.equal(res.body.error.code, 'message_too_large', path);
    }
    assert.deepEqual(t.violations.slice(seen), []);
  });

  test('after all of it the relay still serves and lists only what it accepted', async () => {
    const ok = await t.send({ subject: 'after the sweep' });
    assert.equal(ok.status, 202, ok.text);
    const list = await t.api('GET', '/v1/emails?limit=100');
    assert.equal(list.status, 200, list.text);
    assert.ok(list.body.emails.every((e: any) => !e.subject.includes('\u0000')));
  });
});

test('a slow client that never finishes its headers does not stop the relay serving', async () => {
  const socket = net.connect(Number(new URL(t.directUrl).port), '127.0.0.1');
  socket.on('error', () => {});
  socket.write('POST /v1/emails HTTP/1.1\r\nHost: x\r\n');
  const res = await t.send({});
  assert.equal(res.status, 202);
  socket.destroy();
});

/** Writes one request on a socket of its own and reads the whole answer (the relay closes it). */
const exchange = (request: string) => rawExchange(Number(new URL(t.directUrl).port), request);

function assertErrorAnswer(answer: { status: number; headers: string; body: string }, status: number, code: string): void {
  assert.equal(answer.status, status, answer.headers);
  assert.match(answer.headers, /\r\nRequest-Id: req_\w+/i, answer.headers);
  assert.equal(JSON.parse(answer.body).error.code, code, answer.body);
}

test('regression: an HTTP/1.1 request without Host is 400 invalid_request with the error body and a Request-Id (node answered a bare 400)', async () => {
  assertErrorAnswer(await exchange(`GET /v1/emails HTTP/1.1\r\nAuthorization: Bearer ${t.apiKey}\r\nConnection: close\r\n\r\n`), 400, 'invalid_request');
  assertErrorAnswer(await exchange('GET /admin/v1/workspaces HTTP/1.1\r\nConnection: close\r\n\r\n'), 400, 'invalid_request');
  // HTTP/1.0 has no Host header to require.
  const old = await exchange(`GET /v1/emails HTTP/1.0\r\nAuthorization: Bearer ${t.apiKey}\r\n\r\n`);
  assert.equal(old.status, 200, old.headers);
  assert.ok(Array.isArray(JSON.parse(old.body).emails));
});

test('regression: an Expect other than 100-continue is served as without it, never a bare 417', async () => {
  assertErrorAnswer(await exchange('GET /v1/emails HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\nConnection: close\r\n\r\n'), 401, 'invalid_api_key');
  const body = JSON.stringify(valid());
  const sent = await exchange(
    `POST /v1/emails HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.apiKey}\r\nContent-Type: application/json\r\nExpect: something-else\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
  assert.equal(sent.status, 202, sent.body);
  assert.equal(JSON.parse(sent.body).status, 'queued');
});

test('regression: a target starting "//" is a path, not an authority: //x/v1/emails is an unknown route (it was served as /v1/emails)', async () => {
  for (const target of ['//x/v1/emails', '//v1/emails']) {
    const answer = await exchange(`GET ${target} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.apiKey}\r\nConnection: close\r\n\r\n`);
    assertErrorAnswer(answer, 404, 'not_found');
    assert.match(JSON.parse(answer.body).error.message, new RegExp(`GET ${target}\\.`), answer.body);
  }
  // The absolute form names the path it carries (RFC 9112 section 3.2.2).
  const absolute = await exchange(`GET http://relay.test/v1/emails HTTP/1.1\r\nHost: relay.test\r\nAuthorization: Bearer ${t.apiKey}\r\nConnection: close\r\n\r\n`);
  assert.equal(absolute.status, 200, absolute.headers);
});

test('regression: a WebSocket handshake ws cannot accept (no Sec-WebSocket-Key, a bad version, an Upgrade other than websocket) is 400 invalid_request with the error body and a Request-Id (ws wrote a bare text 400)', async () => {
  const handshake = (headers: string) => `GET /v1/listen HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nAuthorization: Bearer ${t.apiKey}\r\n${headers}\r\n`;
  for (const headers of [
    'Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n',
    'Upgrade: websocket\r\nSec-WebSocket-Key: short\r\nSec-WebSocket-Version: 13\r\n',
    'Upgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 99\r\n',
    'Upgrade: h2c\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n',
  ]) {
    assertErrorAnswer(await exchange(handshake(headers)), 400, 'invalid_request');
  }
});
