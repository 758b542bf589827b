// The README's two commands must not break each other (issue 20): `npm run relay` leaves ./.raven
// (with the admin token) in the checkout, and a developer may have RAVEN_* variables set and a
// profile saved; `npm test` must pass all the same. Every ravenctl the tests start runs in a folder
// of its own with only the environment the test gives it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ravenctl } from '../helpers/ravenctl.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dataDir = path.join(root, '.raven');
const tokenFile = path.join(dataDir, 'admin-token');
const LEAKED = { RAVEN_ADMIN_TOKEN: 'leaked-admin-token', RAVEN_API_KEY: 'rr_test_leaked', RAVEN_BASE_URL: 'http://127.0.0.1:9', RAVEN_PROFILE: 'leaked' };
const saved: Record<string, string | undefined> = {};
const created: string[] = [];
let home: string;

before(() => {
  // What `npm run relay` leaves in the checkout (kept as it is when a developer's relay made it).
  if (!existsSync(dataDir)) {
    mkdirSync(dataDir, { mode: 0o700 });
    created.push(dataDir);
  }
  if (!existsSync(tokenFile)) {
    writeFileSync(tokenFile, 'developer-admin-token\n', { mode: 0o600 });
    created.push(tokenFile);
  }
  // The developer's shell: RAVEN_* variables and a profile in their config folder.
  home = mkdtempSync(path.join(tmpdir(), 'developer-home-'));
  mkdirSync(path.join(home, '.config', 'raven'), { recursive: true });
  writeFileSync(path.join(home, '.config', 'raven', 'config.json'), JSON.stringify({ profiles: { default: { api_key: 'rr_test_profile', base_url: 'http://127.0.0.1:9' } } }));
  for (const [name, value] of Object.entries({ ...LEAKED, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config') })) {
    saved[name] = process.env[name];
    process.env[name] = value;
  }
});
after(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  for (const file of created.reverse()) rmSync(file, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

test("the README's two commands: a ./.raven left by `npm run relay` and the developer's RAVEN_* and profile never reach a ravenctl the tests start", async () => {
  const admin = await ravenctl(['relay', 'workspaces', 'list', '--json']);
  assert.equal(admin.code, 2, admin.stderr);
  assert.equal(JSON.parse(admin.stderr).error.code, 'missing_admin_token');
  const emails = await ravenctl(['emails', 'list', '--json']);
  assert.equal(emails.code, 2, emails.stderr);
  assert.equal(JSON.parse(emails.stderr).error.code, 'missing_api_key');
});

test('ravenctl login started by a test saves its profile in its own folder, never in the developer home', async () => {
  const login = await ravenctl(['login', '--json'], { input: 'rr_test_0123456789abcdef\n' });
  assert.equal(login.code, 0, login.stderr);
  const saved = JSON.parse(login.stdout);
  assert.ok(!saved.path.startsWith(home), `${saved.path} is in the developer's home`);
  assert.ok(saved.path.startsWith(tmpdir()), `${saved.path} is in the test's own folder`);
  assert.equal(saved.base_url, 'http://127.0.0.1:7700', 'the default, not RAVEN_BASE_URL');
});
