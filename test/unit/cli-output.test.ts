// ravenctl output: human rendering without colour (NO_COLOR, non-TTY), JSON mode selection,
// error shapes, key redaction.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CliError, ExitCode, RefusedError, errorToHuman, errorToJson } from '../../cli/errors.js';
import {
  Output,
  colorEnabled,
  painter,
  redactKey,
  renderFields,
  renderTable,
  renderTimeline,
  visibleWidth,
  wantsJson,
} from '../../cli/output.js';
import { renderEmailDetail, renderEmailList, isTerminal } from '../../cli/render.js';

function sink(isTTY = false) {
  let text = '';
  return { stream: { isTTY, write: (chunk: string) => ((text += chunk), true) }, text: () => text };
}

const plain = painter(false);

describe('colour', () => {
  test('NO_COLOR turns colour off even on a terminal; FORCE_COLOR turns it on', () => {
    assert.equal(colorEnabled({ isTTY: true, write: () => true }, { NO_COLOR: '1' }), false);
    assert.equal(colorEnabled({ isTTY: true, write: () => true }, {}), true);
    assert.equal(colorEnabled({ isTTY: false, write: () => true }, {}), false);
    assert.equal(colorEnabled({ isTTY: false, write: () => true }, { FORCE_COLOR: '1' }), true);
    assert.equal(colorEnabled({ isTTY: true, write: () => true }, { NO_COLOR: '1', FORCE_COLOR: '1' }), false);
  });
  test('a disabled painter returns the text untouched; an enabled one wraps it in ANSI', () => {
    assert.equal(plain('red', 'bounced'), 'bounced');
    const red = painter(true)('red', 'bounced');
    assert.match(red, /\u001b\[31mbounced\u001b\[39m/);
    assert.equal(visibleWidth(red), 7);
  });
  test('Output on a terminal with NO_COLOR writes no escape codes', () => {
    const out = sink(true);
    const o = new Output({ json: false, stdout: out.stream, stderr: sink(true).stream, env: { NO_COLOR: '1' } });
    o.result({}, () => renderTable([{ header: 'STATUS', value: (r: { s: string }) => r.s, style: () => 'green' }], [{ s: 'delivered' }], o.paint));
    assert.doesNotMatch(out.text(), /\u001b/);
  });
});

describe('JSON or human', () => {
  test('JSON only with --json, whether or not stdout is a terminal (CONTRACT section 7)', () => {
    assert.equal(wantsJson(true, { isTTY: true, write: () => true }), true);
    assert.equal(wantsJson(false, { isTTY: false, write: () => true }), false);
    assert.equal(wantsJson(undefined, { isTTY: true, write: () => true }), false);
    assert.equal(wantsJson(undefined, { isTTY: false, write: () => true }), false);
  });
  test('JSON mode prints exactly one document on stdout and keeps hints off both streams', () => {
    const out = sink();
    const err = sink();
    const o = new Output({ json: true, stdout: out.stream, stderr: err.stream, env: {} });
    o.hint('retry safely with --idempotency-key x');
    o.warn('something');
    o.result({ id: 'em_1', status: 'queued' }, () => 'human');
    assert.deepEqual(JSON.parse(out.text()), { id: 'em_1', status: 'queued' });
    assert.equal(err.text(), '');
    assert.throws(() => o.result({}, () => ''), /two JSON documents/);
  });
  test('human mode sends hints to stderr, never stdout', () => {
    const out = sink();
    const err = sink();
    const o = new Output({ json: false, stdout: out.stream, stderr: err.stream, env: {} });
    o.hint('more: ravenctl emails list --cursor abc');
    o.result({}, () => 'data');
    assert.equal(out.text(), 'data\n');
    assert.equal(err.text(), 'more: ravenctl emails list --cursor abc\n');
  });
});

describe('tables, fields and the timeline', () => {
  test('columns are aligned on the widest cell, two spaces apart', () => {
    const table = renderTable(
      [
        { header: 'ID', value: (r: { id: string; s: string }) => r.id },
        { header: 'STATUS', value: (r) => r.s },
      ],
      [
        { id: 'em_1', s: 'queued' },
        { id: 'em_22222', s: 'delivered' },
      ],
      plain,
    );
    assert.equal(table, ['ID        STATUS', 'em_1      queued', 'em_22222  delivered'].join('\n'));
  });
  test('cells are kept on one line and long ones truncated', () => {
    const table = renderTable([{ header: 'S', value: (r: string) => r, maxWidth: 5 }], ['a\nb', 'abcdefgh'], plain);
    assert.equal(table, ['S', 'a b', 'abcd…'].join('\n'));
  });
  test('fields skip absent values and align labels', () => {
    assert.equal(renderFields([['ID', 'em_1'], ['Cc', undefined], ['Subject', 'Hi']], plain), 'ID       em_1\nSubject  Hi');
  });
  test('the timeline shows time, type and a payload summary, oldest first as given', () => {
    const text = renderTimeline(
      [
        { id: 'evt_1', type: 'email.queued', occurredAt: '2026-11-22T10:00:00.000Z', payload: {} },
        { id: 'evt_2', type: 'email.delivered', occurredAt: '2026-11-22T10:00:01.000Z', payload: { recipient: 'ada@example.test' } },
      ],
      plain,
    );
    assert.equal(
      text,
      [
        '  2026-11-22T10:00:00.000Z  ● email.queued',
        '  2026-11-22T10:00:01.000Z  ● email.delivered  recipient=ada@example.test',
      ].join('\n'),
    );
  });
  const detail = {
    id: 'em_1',
    status: 'delivered' as const,
    from: 'Acme <hello@example.test>',
    to: ['ada@example.test'],
    cc: [],
    subject: 'Hi',
    tags: { campaign: 'spring' },
    test_mode: true,
    created_at: '2026-11-22T10:00:00.000Z',
    reply_to: null,
    metadata: {},
    providerMessageId: '<abc@relay>',
    recipients: [{ email: 'ada@example.test', type: 'to' as const, status: 'delivered' as const, updated_at: '2026-11-22T10:00:01.000Z' }],
    events: [{ id: 'evt_1', type: 'email.queued' as const, occurredAt: '2026-11-22T10:00:00.000Z', payload: {} }],
  };
  test('email detail: header block, recipients table, events', () => {
    const text = renderEmailDetail(detail, plain);
    assert.equal(
      text,
      [
        'ID           em_1',
        'Status       delivered',
        'From         Acme <hello@example.test>',
        'To           ada@example.test',
        'Subject      Hi',
        'Tags         campaign=spring',
        'Test mode    yes',
        'Provider id  <abc@relay>',
        'Created      2026-11-22T10:00:00.000Z',
        '',
        'Recipients',
        '  EMAIL             TYPE  STATUS     UPDATED',
        '  ada@example.test  to    delivered  2026-11-22T10:00:01.000Z',
        '',
        'Events',
        '  2026-11-22T10:00:00.000Z  ● email.queued',
      ].join('\n'),
    );
  });
  test('email list: the five columns, or a note when empty', () => {
    assert.equal(
      renderEmailList([detail], plain),
      [
        'ID    STATUS     TO                SUBJECT  CREATED',
        'em_1  delivered  ada@example.test  Hi       2026-11-22T10:00:00.000Z',
      ].join('\n'),
    );
    assert.equal(renderEmailList([], plain), 'No emails.');
  });
  test('terminal: no recipient queued or delivery_delayed, and the email is not queued', () => {
    assert.equal(isTerminal(detail), true);
    assert.equal(isTerminal({ ...detail, status: 'sent', recipients: [{ ...detail.recipients[0]!, status: 'delivery_delayed' }] }), false);
    assert.equal(isTerminal({ ...detail, status: 'queued', recipients: [] }), false);
    assert.equal(isTerminal({ ...detail, status: 'suppressed', recipients: [] }), true);
  });
});

describe('errors', () => {
  test('JSON errors are {"error":{"code","message","status"}}', () => {
    assert.deepEqual(errorToJson(new CliError('usage_error', 'missing required option --from', ExitCode.usage)), {
      error: { code: 'usage_error', message: 'missing required option --from', status: null },
    });
    const api = new RefusedError('invalid_api_key', 'the API key is invalid', { status: 401, requestId: 'req_1' });
    assert.deepEqual(errorToJson(api), {
      error: { code: 'invalid_api_key', message: 'the API key is invalid', status: 401, request_id: 'req_1' },
    });
  });
  test('human errors are one line: error: <message> (<code>, request <id>)', () => {
    const api = new RefusedError('invalid_api_key', 'the API key is invalid', { status: 401, requestId: 'req_1' });
    assert.equal(errorToHuman(api), 'error: the API key is invalid (invalid_api_key, request req_1)');
    assert.equal(errorToHuman(new CliError('timeout', 'request timed out', ExitCode.network)), 'error: request timed out (timeout)');
  });
  test('validation details follow, one per line', () => {
    const err = new RefusedError('validation_error', 'invalid request', { status: 422, details: [{ field: 'to[0]', message: 'not an address' }] });
    assert.equal(errorToHuman(err), 'error: invalid request (validation_error)\n  to[0]: not an address');
  });
});

describe('redactKey', () => {
  test('keeps the prefix and the last four characters', () => {
    assert.equal(redactKey('rr_test_abcdefghijklmnop'), 'rr_test_…mnop');
    assert.equal(redactKey('rr_live_0123456789'), 'rr_live_…6789');
    assert.equal(redactKey('rr_test_ab'), 'rr_test_…');
    assert.equal(redactKey('whatever-secret'), '…cret');
  });
});
