// ravenctl as a process: exit codes, global flags before and after the subcommand, usage errors,
// send --dry-run, login and the config file, and completion.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { configPath, resolveTarget, writeConfig } from '../../cli/config.js';
import { jsonFlagOf, selectLeaf } from '../../cli/program.js';
import { ravenctl as run, type RavenctlRun } from '../helpers/ravenctl.js';

const dir = mkdtempSync(join(tmpdir(), 'ravenctl-commands-'));
after(() => rmSync(dir, { recursive: true, force: true }));


function ravenctl(args: string[], options: { input?: string; env?: Record<string, string> } = {}): Promise<RavenctlRun> {
  return run(args, { input: options.input, env: { HOME: dir, XDG_CONFIG_HOME: join(dir, 'xdg'), ...options.env } });
}

const SEND = ['send', '--from', 'Acme <hello@example.test>', '--to', 'ada@example.test', '--subject', 'Hi', '--text', 'Hello'];

describe('argv scanning', () => {
  test('selectLeaf finds the command words, skipping global flags and their values', () => {
    assert.deepEqual(selectLeaf(['send', '--to', 'x'])?.path, ['send']);
    assert.deepEqual(selectLeaf(['--api-key', 'emails', 'emails', 'list'])?.path, ['emails', 'list']);
    assert.deepEqual(selectLeaf(['--json', 'relay', 'workspaces', 'create', '--name', 'x'])?.path, ['relay', 'workspaces', 'create']);
    assert.deepEqual(selectLeaf(['relay', 'usage'])?.path, ['relay', 'usage']);
    assert.deepEqual(selectLeaf(['help', 'send'])?.path, ['send']);
    assert.equal(selectLeaf(['relay']), undefined);
    assert.equal(selectLeaf(['nope', 'send']), undefined);
    assert.equal(selectLeaf(['--', 'send']), undefined);
  });
  test('jsonFlagOf: the last of --json / --no-json wins, nothing after --', () => {
    assert.equal(jsonFlagOf(['send', '--json']), true);
    assert.equal(jsonFlagOf(['--json', 'send', '--no-json']), false);
    assert.equal(jsonFlagOf(['send']), undefined);
    assert.equal(jsonFlagOf(['send', '--', '--json']), undefined);
  });
});

describe('exit codes', () => {
  test('--version and --help exit 0 and print to stdout', async () => {
    const v = await ravenctl(['--version']);
    assert.equal(v.code, 0);
    assert.match(v.stdout, /^\d+\.\d+\.\d+\n$/);
    const h = await ravenctl(['send', '--help']);
    assert.equal(h.code, 0);
    assert.match(h.stdout, /Examples:/);
    assert.match(h.stdout, /Exit codes:/);
    assert.match(h.stdout, /test_recipient_not_allowed/);
    assert.match(h.stdout, /--api-key/, 'global options are listed in command help');
    // JSON is printed only when asked for (CONTRACT section 7): the help must not promise more.
    assert.doesNotMatch(h.stdout, /not a terminal\)/);
    assert.match(h.stdout, /--json +print one JSON document on stdout/);
    assert.match(h.stdout, /In a terminal, a missing --from, --to or --subject is asked for/, 'send --help names its prompts');
    assert.match(h.stdout, /--html-file <file>/);
  });
  test('every leaf has examples and exit codes in its help', async () => {
    for (const path of [['emails', 'list'], ['emails', 'get'], ['webhooks', 'verify'], ['relay', 'start'], ['relay', 'keys', 'create'], ['login'], ['completion'], ['listen']]) {
      const h = await ravenctl([...path, '--help']);
      assert.equal(h.code, 0, path.join(' '));
      assert.match(h.stdout, /Examples:\n {2}\$ ravenctl/, path.join(' '));
      assert.match(h.stdout, /Exit codes:/, path.join(' '));
    }
  });
  test('an unknown option or command is a usage error: exit 2, one line on stderr, nothing on stdout', async () => {
    const r = await ravenctl(['emails', 'list', '--nope', '--no-json']);
    assert.equal(r.code, 2);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^error: unknown option '--nope'/);
    const c = await ravenctl(['frobnicate', '--json']);
    assert.equal(c.code, 2);
    assert.equal(JSON.parse(c.stderr).error.code, 'usage_error');
  });
  test('send without --from, not in a terminal: exit 2 naming the flag', async () => {
    const r = await ravenctl(['send', '--to', 'ada@example.test', '--subject', 'Hi', '--text', 'x', '--no-json'], { env: { RAVEN_API_KEY: 'rr_test_x' } });
    assert.equal(r.code, 2);
    assert.equal(r.stderr, 'error: missing required option --from (missing_option)\n');
    const j = await ravenctl(['send', '--from', 'a@example.test', '--subject', 'Hi', '--text', 'x', '--json']);
    assert.equal(j.code, 2);
    assert.deepEqual(JSON.parse(j.stderr), { error: { code: 'missing_option', message: 'missing required option --to', status: null } });
    const body = await ravenctl(['send', '--from', 'a@example.test', '--to', 'b@example.test', '--subject', 'Hi', '--json']);
    assert.equal(body.code, 2);
    assert.match(JSON.parse(body.stderr).error.message, /--text/);
  });
  test('--text and --text-file together, or a malformed --header, are usage errors', async () => {
    const both = await ravenctl([...SEND, '--text-file', 'x.txt', '--json']);
    assert.equal(both.code, 2);
    const header = await ravenctl([...SEND, '--header', 'NoColon', '--json']);
    assert.equal(header.code, 2);
    assert.match(JSON.parse(header.stderr).error.message, /Name: value/);
  });
  test('no API key: exit 2 with missing_api_key', async () => {
    const r = await ravenctl(['emails', 'list', '--json']);
    assert.equal(r.code, 2);
    assert.equal(JSON.parse(r.stderr).error.code, 'missing_api_key');
  });
  test('nothing listening: exit 3 with connection_error, in either flag order', async () => {
    // A port that was just closed refuses connections.
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    await new Promise<void>((r) => server.close(() => r()));
    const url = `http://127.0.0.1:${port}`;
    const after = await ravenctl(['emails', 'list', '--api-key', 'rr_test_abc', '--base-url', url, '--json']);
    assert.equal(after.code, 3, after.stderr);
    assert.deepEqual(Object.keys(JSON.parse(after.stderr).error), ['code', 'message', 'status']);
    assert.equal(JSON.parse(after.stderr).error.code, 'connection_error');
    assert.equal(after.stdout, '');
    const before = await ravenctl(['--api-key', 'rr_test_abc', '--base-url', url, '--json', ...SEND]);
    assert.equal(before.code, 3, before.stderr);
  });
  test('a group without its subcommand: help on stderr, exit 2', async () => {
    const r = await ravenctl(['relay', 'keys', '--no-json']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /create/);
  });
  test('admin commands without a token: exit 2; without a required value: exit 2 naming it', async () => {
    const token = await ravenctl(['relay', 'workspaces', 'list', '--json']);
    assert.equal(token.code, 2);
    assert.equal(JSON.parse(token.stderr).error.code, 'missing_admin_token');
    const name = await ravenctl(['relay', 'projects', 'create', '--workspace', 'ws_1', '--name', 'web', '--admin-token', 't', '--json']);
    assert.equal(name.code, 2);
    assert.equal(JSON.parse(name.stderr).error.message, 'missing required option --environment');
    const bad = await ravenctl(['relay', 'keys', 'create', '--project', 'p', '--name', 'n', '--permission', 'email:all', '--admin-token', 't', '--json']);
    assert.equal(bad.code, 2);
  });
});

describe('send --dry-run', () => {
  test('prints the request it would send, exit 0, without a key or a network', async () => {
    const r = await ravenctl([...SEND, '--cc', 'c@example.test', '--cc', 'd@example.test', '--tag', 'campaign=spring', '--metadata', 'order=42', '--header', 'X-Campaign: spring', '--idempotency-key', 'order-42', '--dry-run', '--json'], { env: { RAVEN_BASE_URL: 'http://127.0.0.1:9' } });
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.dry_run, true);
    assert.equal(out.method, 'POST');
    assert.equal(out.url, 'http://127.0.0.1:9/v1/emails');
    assert.equal(out.headers['Idempotency-Key'], 'order-42');
    assert.equal(out.idempotency_key, 'order-42');
    assert.deepEqual(out.body, {
      from: 'Acme <hello@example.test>',
      to: ['ada@example.test'],
      subject: 'Hi',
      text: 'Hello',
      cc: ['c@example.test', 'd@example.test'],
      headers: { 'X-Campaign': 'spring' },
      tags: { campaign: 'spring' },
      metadata: { order: '42' },
    });
  });
  test('the key is shown redacted', async () => {
    const r = await ravenctl([...SEND, '--dry-run', '--json'], { env: { RAVEN_API_KEY: 'rr_test_supersecretvalue1234' } });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).headers.Authorization, 'Bearer rr_test_…1234');
    assert.doesNotMatch(r.stdout, /supersecret/);
  });
  test('a generated idempotency key is included in the JSON', async () => {
    const r = await ravenctl([...SEND, '--dry-run', '--json']);
    assert.match(JSON.parse(r.stdout).idempotency_key, /^[0-9a-f-]{36}$/);
  });
  test('--text-file - reads the body from stdin', async () => {
    const r = await ravenctl(['send', '--from', 'a@example.test', '--to', 'b@example.test', '--subject', 'Hi', '--text-file', '-', '--dry-run', '--json'], { input: 'line 1\nline 2\n' });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).body.text, 'line 1\nline 2\n');
  });
  test('a request the API would refuse: exit 1 validation_error with details', async () => {
    const to = Array.from({ length: 51 }, (_, i) => ['--to', `u${i}@example.test`]).flat();
    const r = await ravenctl(['send', '--from', 'a@example.test', ...to, '--subject', 'Hi', '--text', 'x', '--tag', 'rr_x=1', '--dry-run', '--json']);
    assert.equal(r.code, 1);
    const { error } = JSON.parse(r.stderr);
    assert.equal(error.code, 'validation_error');
    assert.equal(error.status, null);
    assert.ok(error.details.length >= 2);
  });
});

describe('configuration', () => {
  const env = { XDG_CONFIG_HOME: join(dir, 'cfg') };
  before(async () => {
    await writeConfig(configPath(env), {
      profiles: {
        default: { api_key: 'rr_test_fromprofile', base_url: 'http://profile.example:7700' },
        other: { api_key: 'rr_test_other' },
      },
    });
  });
  test('--api-key > RAVEN_API_KEY > profile; --base-url > RAVEN_BASE_URL > profile > local relay', async () => {
    const t0 = await resolveTarget({}, env);
    assert.equal(t0.apiKey, 'rr_test_fromprofile');
    assert.equal(t0.baseUrl, 'http://profile.example:7700');
    const t1 = await resolveTarget({}, { ...env, RAVEN_API_KEY: 'rr_test_env', RAVEN_BASE_URL: 'http://env.example/' });
    assert.equal(t1.apiKey, 'rr_test_env');
    assert.equal(t1.baseUrl, 'http://env.example');
    const t2 = await resolveTarget({ apiKey: 'rr_test_flag', baseUrl: 'http://flag.example' }, { ...env, RAVEN_API_KEY: 'rr_test_env' });
    assert.equal(t2.apiKey, 'rr_test_flag');
    assert.equal(t2.baseUrl, 'http://flag.example');
    const t3 = await resolveTarget({ profile: 'other' }, env);
    assert.equal(t3.apiKey, 'rr_test_other');
    assert.equal(t3.baseUrl, 'http://127.0.0.1:7700');
    await assert.rejects(resolveTarget({ profile: 'missing' }, env), /profile "missing" not found/);
    await assert.rejects(resolveTarget({ baseUrl: 'ftp://x' }, env), /invalid base URL/);
  });
  test('the config file is written with mode 0600', () => {
    assert.equal(statSync(configPath(env)).mode & 0o777, 0o600);
  });
  test('login reads the key from stdin (never argv), stores it 0600, shows it redacted', async () => {
    const loginEnv = { XDG_CONFIG_HOME: join(dir, 'login') };
    const r = await ravenctl(['login', '--profile', 'work', '--base-url', 'http://relay.example:7700', '--json'], { input: 'rr_test_abcdefghijkl9876\n', env: loginEnv });
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.profile, 'work');
    assert.equal(out.api_key, 'rr_test_…9876');
    assert.doesNotMatch(r.stdout + r.stderr, /abcdefghijkl/);
    const file = configPath(loginEnv);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')).profiles.work, { api_key: 'rr_test_abcdefghijkl9876', base_url: 'http://relay.example:7700' });
    // The stored profile is then used.
    const dry = await ravenctl(['--profile', 'work', ...SEND, '--dry-run', '--json'], { env: loginEnv });
    assert.equal(JSON.parse(dry.stdout).url, 'http://relay.example:7700/v1/emails');
    assert.equal(JSON.parse(dry.stdout).headers.Authorization, 'Bearer rr_test_…9876');
  });
  test('login refuses --api-key and keys that do not look like keys', async () => {
    const argv = await ravenctl(['login', '--api-key', 'rr_test_x', '--json'], { input: '' });
    assert.equal(argv.code, 2);
    const junk = await ravenctl(['login', '--json'], { input: 'hello\n' });
    assert.equal(junk.code, 2);
  });
  test('a broken config file is a usage error naming the file', async () => {
    const badEnv = { XDG_CONFIG_HOME: join(dir, 'bad') };
    await writeConfig(configPath(badEnv), { profiles: {} });
    writeFileSync(configPath(badEnv), '{nope');
    const r = await ravenctl(['emails', 'list', '--json'], { env: badEnv });
    assert.equal(r.code, 2);
    assert.match(JSON.parse(r.stderr).error.message, /not valid JSON/);
  });
});

describe('completion', () => {
  for (const shell of ['bash', 'zsh', 'fish']) {
    test(`${shell}: a script naming the commands and their flags`, async () => {
      const r = await ravenctl(['completion', shell]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /ravenctl/);
      assert.match(r.stdout, /idempotency-key/);
      assert.match(r.stdout, /workspaces/);
    });
  }
  test('an unknown shell is a usage error', async () => {
    assert.equal((await ravenctl(['completion', 'tcsh'])).code, 2);
  });
});
