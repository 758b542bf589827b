// A past time for `recover --since/--until`: ISO 8601 as given, or a time ago (30m, 2h, 1d) counted
// back from the relay's clock; anything else is a usage error naming both forms.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InvalidArgumentError } from 'commander';
import { ExitCode, toCliError } from '../../cli/errors.js';
import { isTimeAgo, parsePastTime, resolvePastTime } from '../../cli/past-time.js';

const NOW = Date.parse('2026-11-27T12:00:00.000Z');

describe('parsePastTime and resolvePastTime', () => {
  test('a time ago in seconds, minutes, hours, days or weeks counts back from the given now', () => {
    const cases: Array<[string, string]> = [
      ['45s', '2026-11-27T11:59:15.000Z'],
      ['30m', '2026-11-27T11:30:00.000Z'],
      ['2h', '2026-11-27T10:00:00.000Z'],
      ['1d', '2026-11-26T12:00:00.000Z'],
      ['1w', '2026-11-20T12:00:00.000Z'],
      ['0m', '2026-11-27T12:00:00.000Z'],
    ];
    for (const [value, expected] of cases) {
      const time = parsePastTime(value);
      assert.ok(isTimeAgo(time), value);
      assert.equal(resolvePastTime(time, NOW, '--since'), expected, value);
    }
  });

  test('an ISO time is sent as given, for the relay to check (the clock is not needed)', () => {
    for (const value of ['2026-11-27T09:00:00Z', '2026-11-27T09:00:00.123+01:00', '2026-02-30T00:00:00Z']) {
      const time = parsePastTime(value);
      assert.equal(isTimeAgo(time), false);
      assert.equal(resolvePastTime(time, 0, '--since'), value);
    }
    assert.equal(isTimeAgo(undefined), false);
  });

  test('anything else is refused when the flag is read, naming both forms: a usage error (exit 2)', () => {
    for (const value of ['', '2x', '2', 'h', '-2h', '2.5h', '2 h', '2H', '2h30m', 'yesterday', 'now', '1e3s', '１h', '2026-11-27', '1234567890s']) {
      assert.throws(
        () => parsePastTime(value),
        (error: unknown) => {
          assert.ok(error instanceof InvalidArgumentError, JSON.stringify(value));
          assert.match(error.message, /ISO 8601 .*30m, 2h, 1d/);
          return true;
        },
      );
    }
  });

  test('a time ago reaching back before 1970 is a usage error', () => {
    assert.throws(
      () => resolvePastTime(parsePastTime('999999999w'), NOW, '--since'),
      (error: unknown) => {
        const cli = toCliError(error);
        assert.equal(cli.exitCode, ExitCode.usage);
        assert.match(cli.message, /--since 999999999w reaches back before 1970/);
        return true;
      },
    );
  });
});
