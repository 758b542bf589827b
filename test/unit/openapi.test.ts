// openapi.yaml is the single source of truth: it must lint clean, the committed generated types
// must match it, and the contract checker built on it must be able to fail.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createConfig, lint } from '@redocly/openapi-core';
import {
  assertNoViolations,
  spec,
  startContractProxy,
  validateRequestBody,
  validateResponse,
} from '../helpers/contract.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const specPath = join(root, 'openapi.yaml');
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

describe('openapi.yaml', () => {
  test('passes the Redocly recommended ruleset with no problems', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lint({ ref: specPath, config });
    const report = problems.map(
      (p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? '?'}`,
    );
    assert.deepEqual(report.filter((line) => line.startsWith('error')), [], report.join('\n'));
    assert.deepEqual(report, [], `warnings:\n${report.join('\n')}`);
  });

  test('sdk/generated/openapi.ts is what `npm run generate` produces', () => {
    const dir = mkdtempSync(join(tmpdir(), 'raven-generate-'));
    try {
      const out = join(dir, 'openapi.ts');
      // The same two steps as the `generate` script, into a temporary file.
      const cli = join(root, 'node_modules/openapi-typescript/bin/cli.js');
      execFileSync(process.execPath, [cli, specPath, '-o', out], { cwd: root, stdio: 'pipe' });
      execFileSync(process.execPath, [join(root, 'scripts/generated-header.mjs'), out], { stdio: 'pipe' });
      const fresh = readFileSync(out, 'utf8');
      const committed = readFileSync(join(root, 'sdk/generated/openapi.ts'), 'utf8');
      assert.ok(fresh.startsWith('// Generated from openapi.yaml'), 'header missing');
      assert.ok(committed === fresh, 'sdk/generated/openapi.ts is stale: run `npm run generate`');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the generated-header script is idempotent', () => {
    const dir = mkdtempSync(join(tmpdir(), 'raven-header-'));
    try {
      const file = join(dir, 'x.ts');
      writeFileSync(file, 'export {};\n');
      const script = join(root, 'scripts/generated-header.mjs');
      execFileSync(process.execPath, [script, file]);
      const once = readFileSync(file, 'utf8');
      execFileSync(process.execPath, [script, file]);
      assert.equal(readFileSync(file, 'utf8'), once);
      assert.match(once, /^\/\/ Generated from openapi\.yaml .*npm run generate`\.\nexport \{\};\n$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('every ErrorCode has exactly one catalogue entry with an HTTP status', () => {
    const errorCode = spec.components.schemas.ErrorCode;
    const catalogue: { code: string; status: number; meaning: string }[] = errorCode['x-error-catalogue'];
    assert.deepEqual(catalogue.map((e) => e.code).sort(), [...errorCode.enum].sort());
    for (const entry of catalogue) {
      assert.ok(Number.isInteger(entry.status) && entry.status >= 400 && entry.status < 600, entry.code);
      assert.ok(entry.meaning.length > 0, entry.code);
      assert.ok(errorCode.description.includes(`\`${entry.code}\` ${entry.status}`), `${entry.code} missing from the description`);
    }
  });

  test('every response of every operation documents Request-Id', () => {
    const missing: string[] = [];
    for (const [path, item] of Object.entries<Record<string, any>>(spec.paths)) {
      for (const method of METHODS.filter((m) => item[m])) {
        for (const [status, ref] of Object.entries<Record<string, any>>(item[method].responses)) {
          const response = ref.$ref ? spec.components.responses[ref.$ref.split('/').pop()] : ref;
          if (response.headers?.['Request-Id']?.$ref !== '#/components/headers/RequestId') {
            missing.push(`${method.toUpperCase()} ${path} ${status}`);
          }
        }
      }
    }
    assert.deepEqual(missing, []);
  });

  test('every 429 and 503 response documents Retry-After', () => {
    for (const name of ['TooManyRequests', 'ServiceUnavailable']) {
      assert.equal(spec.components.responses[name].headers['Retry-After'].$ref, '#/components/headers/RetryAfter');
    }
  });
});

describe('contract checker', () => {
  const t = '2026-11-22T10:00:00.000Z';
  const headers = { 'request-id': 'req_01JDQ4ZK5W9M2V3XG7H8TQ1B6N' };
  const detail = {
    id: 'em_1',
    status: 'sent',
    from: 'Acme <noreply@example.test>',
    to: ['user@example.test'],
    cc: [],
    subject: 'Hello',
    tags: { category: 'welcome' },
    test_mode: true,
    created_at: t,
    reply_to: null,
    metadata: { order_id: '1234' },
    providerMessageId: '<abc@example.test>',
    recipients: [{ email: 'user@example.test', type: 'to', status: 'delivered', updated_at: t }],
    events: [{ id: 'evt_1', type: 'email.queued', occurredAt: t, payload: {} }],
  };
  const getEmail = { method: 'GET', path: '/v1/emails/em_1', status: 200, contentType: 'application/json; charset=utf-8', headers };

  test('accepts a valid EmailDetail', () => {
    assert.deepEqual(validateResponse({ ...getEmail, body: detail }), []);
    assert.deepEqual(validateResponse({ ...getEmail, body: JSON.stringify(detail) }), []);
  });

  test('rejects a detail that leaks bcc', () => {
    const problems = validateResponse({ ...getEmail, body: { ...detail, bcc: ['hidden@example.test'] } });
    assert.ok(problems.some((p) => p.includes('(bcc)')), problems.join('\n'));
  });

  test('rejects a list without next_cursor', () => {
    const problems = validateResponse({ ...getEmail, path: '/v1/emails?limit=10', body: { emails: [] } });
    assert.ok(problems.some((p) => p.includes('next_cursor')), problems.join('\n'));
  });

  test('rejects a missing Request-Id, an undocumented status and a bad Retry-After', () => {
    assert.ok(validateResponse({ ...getEmail, headers: {}, body: detail }).some((p) => p.includes('Request-Id')));
    assert.ok(validateResponse({ ...getEmail, status: 418, body: detail }).some((p) => p.includes('not documented')));
    const tooMany = validateResponse({
      method: 'POST',
      path: '/v1/emails',
      status: 429,
      contentType: 'application/json',
      headers,
      body: { error: { code: 'rate_limit_exceeded', message: 'Retry in 1 second.', retry_after: 1 } },
    });
    assert.ok(tooMany.some((p) => p.includes('Retry-After')), tooMany.join('\n'));
  });

  test('expects 404 for unknown routes and 405 for wrong methods', () => {
    const notFound = { error: { code: 'not_found', message: 'No such route.' } };
    assert.deepEqual(validateResponse({ method: 'GET', path: '/v2/x', status: 404, contentType: 'application/json', headers, body: notFound }), []);
    assert.notDeepEqual(validateResponse({ method: 'PUT', path: '/v1/emails', status: 404, contentType: 'application/json', headers, body: notFound }), []);
  });

  test('validates send requests', () => {
    const ok = { from: 'Acme <noreply@example.test>', to: 'user@example.test', subject: 'Hi', text: 'Hello' };
    assert.deepEqual(validateRequestBody('POST', '/v1/emails', ok), []);
    for (const bad of [
      { ...ok, text: '' },
      { ...ok, subject: 'a\r\nBcc: x@example.test' },
      { ...ok, to: [] },
      { ...ok, tags: { rr_internal: 'x' } },
      { ...ok, headers: { 'message-id': '<x@y>' } },
      { ...ok, attachments: [] },
    ]) {
      assert.notDeepEqual(validateRequestBody('POST', '/v1/emails', bad), [], JSON.stringify(bad));
    }
  });
});

describe('contract proxy', () => {
  const seen: { rawHeaders: string[]; body: string }[] = [];
  const target = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ rawHeaders: req.rawHeaders, body: Buffer.concat(chunks).toString() });
      const body = JSON.stringify(req.url === '/livez' ? { status: 'ok' } : { status: 'ok', extra: true });
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'request-id': 'req_1',
      });
      res.end(body);
    });
  });
  target.on('upgrade', (_req, socket: net.Socket, head: Buffer) => {
    socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n');
    socket.write(head);
    socket.pipe(socket);
  });
  after(() => target.close());

  test('forwards requests unchanged, returns responses unchanged, records violations', async () => {
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    const proxy = await startContractProxy(`http://127.0.0.1:${(target.address() as net.AddressInfo).port}`);
    try {
      const reply = await rawRequest(
        proxy.url,
        'POST /livez HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer a\r\nAuthorization: Bearer b\r\n' +
          'Content-Length: 5\r\nConnection: close\r\n\r\nhello',
      );
      assert.match(reply, /^HTTP\/1\.1 200 /);
      assert.match(reply, /\r\ncontent-length: 15\r\n[\s\S]*\r\n\r\n\{"status":"ok"\}$/);
      assert.deepEqual(seen[0].rawHeaders.filter((h, i) => i % 2 === 1 && seen[0].rawHeaders[i - 1] === 'Authorization'), ['Bearer a', 'Bearer b']);
      assert.equal(seen[0].body, 'hello');
      assert.equal(proxy.violations.length, 1); // POST /livez should be a 405
      proxy.violations.length = 0;

      await rawRequest(proxy.url, 'GET /livez HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      assertNoViolations(proxy);
      await rawRequest(proxy.url, 'GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      assert.throws(() => assertNoViolations(proxy), /readyz/);

      const echoed = await rawRequest(
        proxy.url,
        'GET /v1/listen HTTP/1.1\r\nHost: x\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\nping',
        (text) => text.endsWith('ping'),
      );
      assert.match(echoed, /^HTTP\/1\.1 101 [\s\S]*\r\n\r\nping$/);
    } finally {
      await proxy.close();
    }
  });
});

/** Sends raw bytes and collects the answer until the peer closes (or `done` says so). */
function rawRequest(baseUrl: string, bytes: string, done?: (text: string) => boolean): Promise<string> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    let text = '';
    const socket = net.connect(Number(port), hostname, () => socket.write(bytes));
    socket.on('data', (chunk) => {
      text += chunk.toString();
      if (done?.(text)) socket.end();
    });
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
  });
}
