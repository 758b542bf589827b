// The first five minutes with a real relay process: a first start that fails (its port is taken)
// loses no credential, and `ravenctl relay ...` run next to the data directory finds the admin
// token and the only project by itself.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { firstJsonDocument, ravenctl, spawnRavenctl } from '../helpers/ravenctl.js';

const home = mkdtempSync(join(tmpdir(), 'ravenctl-first-run-'));
const dataDir = join(home, '.raven');
const env = { HOME: home, RAVEN_LOG_LEVEL: 'error' };
let relay: ReturnType<typeof spawnRavenctl> | undefined;
let ready: any;

after(async () => {
  if (relay && relay.exitCode === null) {
    relay.kill('SIGTERM');
    await once(relay, 'close');
  }
  rmSync(home, { recursive: true, force: true });
});

describe('a first start that fails', () => {
  before(async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = String((taken.address() as net.AddressInfo).port);
    const failed = await ravenctl(['relay', 'start', '--port', port, '--smtp-port', '0', '--json'], { cwd: home, env });
    taken.close();
    assert.notEqual(failed.code, 0, `the start on a taken port failed:\n${failed.stdout}\n${failed.stderr}`);
    relay = spawnRavenctl(['relay', 'start', '--port', '0', '--smtp-port', '0', '--json'], { cwd: home, env });
    ready = await firstJsonDocument(relay);
  });

  test('leaves the next start to print the bootstrap key and the generated admin token', () => {
    assert.match(ready.bootstrap.api_key, /^rr_test_/);
    assert.match(ready.admin_token, /^rat_/);
    assert.equal(ready.admin_token_file, join(dataDir, 'admin-token'));
    assert.equal(statSync(dataDir).isDirectory(), true);
  });

  test('every start names the dashboard, the token file and the command for a new key', () => {
    assert.match(ready.dashboard_url, new RegExp(`^${ready.http_url}/#signin=[\\w-]+$`));
    assert.equal(ready.new_key_command, `npx ravenctl relay keys create --name NAME --base-url ${ready.http_url}`);
  });
});

describe('ravenctl relay next to the data directory', () => {
  const admin = (args: string[]) => ravenctl(['relay', ...args, '--json'], { cwd: home, env: { ...env, RAVEN_BASE_URL: ready.http_url } });

  test('keys create --name works with no other flag: the token from ./.raven, the only project, email:send', async () => {
    const run = await admin(['keys', 'create', '--name', 'laptop']);
    assert.equal(run.code, 0, run.stderr);
    const key = JSON.parse(run.stdout);
    assert.match(key.key, /^rr_test_/);
    assert.equal(key.project_id, ready.bootstrap.project_id);
    assert.equal(key.permission, 'email:send');
    const projects = JSON.parse((await admin(['projects', 'list'])).stdout);
    assert.deepEqual(projects.projects.map((p: { id: string }) => p.id), [ready.bootstrap.project_id]);
  });

  test('relay usage, with no flag, counts recipients of the only workspace this UTC month', async () => {
    const run = await ravenctl(['relay', 'usage'], { cwd: home, env: { ...env, RAVEN_BASE_URL: ready.http_url } });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^Month +\d{4}-\d{2} \(UTC\)\nWorkspace +0 of 5,000 recipients \(0\.0%\)\n/);
  });

  test('relay messages list shows the header From, not the bounce address of the envelope', async () => {
    const sendEnv = { ...env, RAVEN_BASE_URL: ready.http_url, RAVEN_API_KEY: ready.bootstrap.api_key };
    const args = ['send', '--from', 'Acme <hello@example.test>', '--to', 'ada@example.test', '--subject', 'Welcome', '--text', 'Hi', '--wait', '--json'];
    const sent = await ravenctl(args, { cwd: home, env: sendEnv });
    assert.equal(sent.code, 0, sent.stderr);
    const list = JSON.parse((await admin(['messages', 'list'])).stdout);
    assert.equal(list.messages[0].header_from, 'Acme <hello@example.test>');
    assert.match(list.messages[0].from, /^bounce\+em_/);
    const human = await ravenctl(['relay', 'messages', 'list'], { cwd: home, env: { ...env, RAVEN_BASE_URL: ready.http_url } });
    assert.match(human.stdout, /\n\S+ +Acme <hello@example\.test> +ada@example\.test +Welcome /);
    assert.doesNotMatch(human.stdout, /bounce\+/);
  });

  test('a token file other users may read is refused (exit 2)', async () => {
    const file = join(dataDir, 'admin-token');
    chmodSync(file, 0o644);
    try {
      const run = await admin(['keys', 'list']);
      assert.equal(run.code, 2);
      assert.equal(JSON.parse(run.stderr).error.code, 'admin_token_file_unsafe');
      assert.match(JSON.parse(run.stderr).error.message, /chmod 600/);
    } finally {
      chmodSync(file, 0o600);
    }
  });

  test('with two projects, a command without --project names both (exit 2)', async () => {
    const project = await admin(['projects', 'create', '--name', 'second', '--environment', 'development']);
    assert.equal(project.code, 0, project.stderr);
    const second = JSON.parse(project.stdout);
    const run = await admin(['keys', 'create', '--name', 'ambiguous']);
    assert.equal(run.code, 2);
    const message = JSON.parse(run.stderr).error.message;
    assert.ok(message.includes(ready.bootstrap.project_id) && message.includes(second.id), message);
  });

  test('elsewhere, with no token anywhere, the error says where it looked', async () => {
    const run = await ravenctl(['relay', 'keys', 'list', '--json'], { cwd: dataDir, env: { ...env, RAVEN_BASE_URL: ready.http_url } });
    assert.equal(run.code, 2);
    assert.equal(JSON.parse(run.stderr).error.code, 'missing_admin_token');
    assert.match(JSON.parse(run.stderr).error.message, /\.raven\/admin-token not found/);
  });
});
