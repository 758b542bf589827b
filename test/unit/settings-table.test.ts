// relay/settings-table.ts is the one declaration of every relay setting: the defaults, the JSON
// file's keys, the RAVEN_* variables, the flags of `ravenctl relay start` and README's
// configuration table all come from it. This fails when README's table or the command's flags say
// otherwise, or when a layer does not reach a setting the table gives it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { defaultConfig, resolveConfig, type RelayConfig } from '../../relay/config.js';
import { flagName, readmeConfigurationTable, SETTINGS, type Setting } from '../../relay/settings-table.js';
import { register } from '../../cli/commands/relay/start.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const rows = SETTINGS as readonly Setting[];
const at = (config: unknown, key: string) => key.split('.').reduce<unknown>((node, part) => (node as Record<string, unknown> | undefined)?.[part], config);

test("README's configuration table is the settings table's", () => {
  const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Relay configuration'));
  const table = section.slice(section.indexOf('| flag |'), section.indexOf('\n\n', section.indexOf('| flag |')));
  assert.equal(table, readmeConfigurationTable(), "README.md's table under 'Relay configuration' must be this (relay/settings-table.ts)");
});

test('relay start has one option per flag of the table, in its order', () => {
  const cmd = new Command('start');
  register(cmd);
  assert.deepEqual(
    cmd.options.map((o) => o.flags),
    rows.flatMap((r) => (r.flag ? [r.flag] : [])),
  );
  assert.deepEqual(
    cmd.options.map((o) => o.attributeName()),
    rows.flatMap((r) => (r.flag ? [flagName(r.flag)] : [])),
  );
});

test('every default of the table is the configuration default, and the file takes every key', () => {
  const defaults = defaultConfig();
  for (const row of rows) {
    if (row.input) continue;
    assert.deepEqual(at(defaults, row.key), row.optional ? undefined : row.default, row.key);
  }
});

test('every variable and flag of the table reaches its setting', () => {
  const sample: Record<string, { text: string; value: unknown }> = {
    string: { text: 'x.example', value: 'x.example' },
    number: { text: '42', value: 42 },
    port: { text: '2525', value: 2525 },
    boolean: { text: 'true', value: true },
    strings: { text: '192.0.2.1, 192.0.2.2', value: ['192.0.2.1', '192.0.2.2'] },
  };
  const valid: Record<string, unknown> = { logLevel: 'debug', database: 'postgres://db.example/raven', dataDir: path.resolve('/srv/raven'), spamd: '127.0.0.1:783' };
  for (const row of rows) {
    if (row.input || (!row.env && !row.flag)) continue;
    const { text, value } = sample[row.kind]!;
    const expected = valid[row.key] ?? value;
    // smtpTls needs both files and implicit TLS an upstream: give the rest alongside.
    const companions: Record<string, string> = { RAVEN_SMTP_TLS_CERT_FILE: '/c.pem', RAVEN_SMTP_TLS_KEY_FILE: '/k.pem', RAVEN_UPSTREAM: 'smtp://u.example' };
    const env = { ...companions, ...(row.env ? { [row.env]: String(valid[row.key] ?? text) } : {}) };
    if (row.env) assert.deepEqual(at(resolveConfig({}, env), row.key), expected, `${row.env} sets ${row.key}`);
    if (row.flag) {
      const flagValue = row.kind === 'strings' ? value : row.kind === 'boolean' ? true : (valid[row.key] ?? text);
      const config: RelayConfig = resolveConfig({ [flagName(row.flag)]: flagValue }, companions);
      assert.deepEqual(at(config, row.key), expected, `${row.flag} sets ${row.key}`);
    }
  }
});

// The configuration's type comes from the table too: checked when the tests are type-checked.
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const derivedTypes: [
  Equal<RelayConfig['logLevel'], 'silent' | 'error' | 'warn' | 'info' | 'debug'>,
  Equal<RelayConfig['delivery']['provider'], 'sink' | 'smtp'>,
  Equal<RelayConfig['delivery']['concurrency'], number | undefined>,
  Equal<RelayConfig['limits']['keyPerSecond'], number>,
  Equal<RelayConfig['dns']['servers'], string[]>,
  Equal<RelayConfig['smtpTls']['certFile'], string | undefined>,
  Equal<'upstream' extends keyof RelayConfig ? true : false, false>,
] = [true, true, true, true, true, true, true];
void derivedTypes;
