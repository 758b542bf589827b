// The one place a failure becomes an exit code: 0 ok, 1 refused, 2 usage, 3 network, 130 Ctrl-C.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CommanderError } from 'commander';
import * as sdk from '../../sdk/index.js';
import { CliError, ExitCode, isCommanderDisplayExit, toCliError } from '../../cli/errors.js';

const headers = { 'request-id': 'req_123' };

describe('toCliError', () => {
  test('every API error exits 1 with its code, status and request id', () => {
    const cases: Array<[number, string]> = [
      [401, 'invalid_api_key'],
      [403, 'forbidden'],
      [403, 'production_not_enabled'],
      [404, 'not_found'],
      [409, 'idempotency_conflict'],
      [413, 'message_too_large'],
      [422, 'validation_error'],
      [422, 'domain_not_verified'],
      [422, 'test_recipient_not_allowed'],
      [429, 'rate_limit_exceeded'],
      [429, 'quota_exceeded'],
      [500, 'internal_error'],
    ];
    for (const [status, code] of cases) {
      const err = sdk.errorFromResponse(status, { error: { code, message: `${code} happened` } }, headers);
      for (const classes of [sdk, undefined]) {
        const cli = toCliError(err, classes);
        assert.equal(cli.exitCode, ExitCode.refused, code);
        assert.equal(cli.code, code);
        assert.equal(cli.status, status);
        assert.equal(cli.requestId, 'req_123');
      }
    }
  });
  test('validation details and retry_after are kept', () => {
    const err = sdk.errorFromResponse(422, { error: { code: 'validation_error', message: 'bad', details: [{ field: 'to[3]', message: 'x' }] } }, {});
    assert.deepEqual(toCliError(err, sdk).details, [{ field: 'to[3]', message: 'x' }]);
    const limited = sdk.errorFromResponse(429, { error: { code: 'rate_limit_exceeded', message: 'wait 2 seconds', retry_after: 2 } }, { 'retry-after': '2' });
    assert.equal(toCliError(limited, sdk).retryAfter, 2);
  });
  test('an API error without a code still exits 1', () => {
    const cli = toCliError(sdk.errorFromResponse(502, 'Bad Gateway', {}), sdk);
    assert.equal(cli.exitCode, 1);
    assert.equal(cli.code, 'http_502');
    assert.equal(cli.status, 502);
  });
  test('connection errors and time-outs exit 3', () => {
    for (const classes of [sdk, undefined]) {
      const conn = toCliError(new sdk.ConnectionError('connection error', { cause: Object.assign(new Error('x'), { code: 'ECONNREFUSED' }) }), classes);
      assert.equal(conn.exitCode, ExitCode.network);
      assert.equal(conn.code, 'connection_error');
      assert.equal(conn.status, null);
      const timeout = toCliError(new sdk.TimeoutError(), classes);
      assert.equal(timeout.exitCode, ExitCode.network);
      assert.equal(timeout.code, 'timeout');
    }
  });
  test('regression: a server ravenctl cannot reach outside the SDK (relay start with an unreachable --database) exits 3, not 1 internal_error', () => {
    for (const code of ['ECONNREFUSED', 'ENOTFOUND', 'ETIMEDOUT']) {
      const err = toCliError(Object.assign(new Error(`connect ${code} 127.0.0.1:1`), { code }), sdk);
      assert.equal(err.exitCode, ExitCode.network, code);
      assert.equal(err.code, 'connection_error', code);
      assert.match(err.message, new RegExp(code));
    }
  });
  test('a failed webhook verification exits 1 with its reason as the code', () => {
    for (const reason of ['missing_header', 'bad_format', 'bad_signature', 'timestamp_too_old', 'timestamp_too_new'] as const) {
      const cli = toCliError(new sdk.WebhookVerificationError(reason, 'no'), sdk);
      assert.equal(cli.exitCode, 1);
      assert.equal(cli.code, reason);
    }
  });
  test('commander usage errors exit 2 without the "error:" prefix; help and version exit 0', () => {
    const usage = toCliError(new CommanderError(1, 'commander.unknownOption', "error: unknown option '--nope'"));
    assert.equal(usage.exitCode, ExitCode.usage);
    assert.equal(usage.message, "unknown option '--nope'");
    assert.equal(isCommanderDisplayExit(new CommanderError(0, 'commander.helpDisplayed', '(outputHelp)')), true);
    assert.equal(isCommanderDisplayExit(new CommanderError(0, 'commander.version', '0.1.0')), true);
    assert.equal(isCommanderDisplayExit(new CommanderError(1, 'commander.missingMandatoryOptionValue', 'x')), false);
  });
  test('Ctrl-C in a prompt exits 130', () => {
    const exit = Object.assign(new Error('User force closed the prompt with SIGINT'), { name: 'ExitPromptError' });
    assert.equal(toCliError(exit).exitCode, ExitCode.interrupted);
  });
  test('a CliError passes through; anything else is reported, not crashed on', () => {
    const own = new CliError('x', 'y', ExitCode.usage);
    assert.equal(toCliError(own), own);
    const odd = toCliError('a string was thrown');
    assert.equal(odd.exitCode, 1);
    assert.equal(odd.code, 'internal_error');
  });
});
