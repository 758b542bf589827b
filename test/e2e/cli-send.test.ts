// ravenctl against a real relay (through the contract-checking proxy): send, --wait, idempotency,
// emails list/get, error codes and exit codes, and the relay admin commands.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';
import { ravenctl as run, type RavenctlRun } from '../helpers/ravenctl.js';

const home = mkdtempSync(join(tmpdir(), 'ravenctl-e2e-'));


let relay: TestRelay;

function ravenctl(args: string[], options: { env?: Record<string, string>; input?: string } = {}): Promise<RavenctlRun> {
  const env = { HOME: home, XDG_CONFIG_HOME: home, RAVEN_BASE_URL: relay.url, RAVEN_API_KEY: relay.apiKey, RAVEN_ADMIN_TOKEN: relay.adminToken };
  return run(args, { input: options.input, env: { ...env, ...options.env } });
}

function json(run: RavenctlRun): any {
  assert.doesNotThrow(() => JSON.parse(run.stdout), `stdout is one JSON document:\n${run.stdout}\nstderr:\n${run.stderr}`);
  return JSON.parse(run.stdout);
}

function jsonError(run: RavenctlRun): { code: string; message: string; status: number | null } {
  return (JSON.parse(run.stderr) as { error: { code: string; message: string; status: number | null } }).error;
}

const to = (local: string) => `${local}@${relay.domain}`;
const sendArgs = (local = 'ada', extra: string[] = []) => [
  'send',
  '--from',
  `Raven Test <sender@${relay.domain}>`,
  '--to',
  to(local),
  '--subject',
  'Hello from ravenctl',
  '--text',
  'Hi there',
  ...extra,
];

before(async () => {
  relay = await startTestRelay();
});
after(async () => {
  await relay?.stop();
  rmSync(home, { recursive: true, force: true });
});

describe('ravenctl send', () => {
  test('--json prints {id, status: queued, test_mode, idempotency_key}; exit 0', async () => {
    const r = await ravenctl([...sendArgs(), '--json']);
    assert.equal(r.code, 0, r.stderr);
    const out = json(r);
    assert.match(out.id, /^em_/);
    assert.equal(out.status, 'queued');
    assert.equal(out.test_mode, true);
    assert.match(out.idempotency_key, /^[0-9a-f-]{36}$/);
    assert.equal(r.stderr, '');
  });

  test('human mode prints the result on stdout, and no retry advice after a send that worked', async () => {
    const r = await ravenctl([...sendArgs(), '--no-json']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^id +em_/m);
    assert.match(r.stdout, /^status +queued$/m);
    assert.equal(r.stderr, '');
  });

  test('global flags after the subcommand: --api-key and --base-url override the environment', async () => {
    const r = await ravenctl([...sendArgs(), '--api-key', relay.apiKey, '--base-url', relay.url, '--json'], {
      env: { RAVEN_API_KEY: 'rr_test_wrong', RAVEN_BASE_URL: 'http://127.0.0.1:9' },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(json(r).status, 'queued');
  });

  test('the same --idempotency-key and body replays the same email; a changed body is refused (409)', async () => {
    const key = `cli-${Date.now()}`;
    const first = json(await ravenctl([...sendArgs(), '--idempotency-key', key, '--json']));
    const again = json(await ravenctl([...sendArgs(), '--idempotency-key', key, '--json']));
    assert.equal(again.id, first.id);
    assert.equal(again.idempotency_key, key);
    const changed = await ravenctl([...sendArgs('bob'), '--idempotency-key', key, '--json']);
    assert.equal(changed.code, 1);
    assert.equal(changed.stdout, '');
    const error = jsonError(changed);
    assert.equal(error.code, 'idempotency_conflict');
    assert.equal(error.status, 409);
  });

  test('--wait: delivered exits 0 with the final detail', async () => {
    const r = await ravenctl([...sendArgs(), '--wait', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const out = json(r);
    assert.equal(out.status, 'delivered');
    assert.equal(out.recipients[0].status, 'delivered');
    assert.ok(out.events.some((e: { type: string }) => e.type === 'email.delivered'));
    assert.match(out.idempotency_key, /^[0-9a-f-]{36}$/);
  });

  test('--wait: a bounce exits 1 (email_bounced), the detail still on stdout', async () => {
    const r = await ravenctl([...sendArgs('bounced'), '--wait', '--json']);
    assert.equal(r.code, 1, r.stderr);
    assert.equal(json(r).status, 'bounced');
    assert.equal(jsonError(r).code, 'email_bounced');
  });

  test('--wait: delivery_unknown exits 1', async () => {
    const r = await ravenctl([...sendArgs('unknown'), '--wait', '--json']);
    assert.equal(r.code, 1, r.stderr);
    assert.equal(json(r).status, 'delivery_unknown');
  });

  test('a suppressed recipient: status suppressed with its reason (exit 0); with --wait exit 1', async () => {
    const add = await ravenctl(['relay', 'suppressions', 'add', '--workspace', relay.workspaceId, '--email', to('blocked'), '--json']);
    assert.equal(add.code, 0, add.stderr);
    const r = await ravenctl([...sendArgs('blocked'), '--json']);
    assert.equal(r.code, 0, r.stderr);
    const out = json(r);
    assert.equal(out.status, 'suppressed');
    assert.equal(out.reason, 'manual');
    assert.ok(out.idempotency_key);
    const waited = await ravenctl([...sendArgs('blocked'), '--wait', '--json']);
    assert.equal(waited.code, 1);
    assert.equal(json(waited).status, 'suppressed');
  });

  test('API refusals exit 1 with code and status: invalid key 401, test recipient 422', async () => {
    const bad = await ravenctl([...sendArgs(), '--json'], { env: { RAVEN_API_KEY: 'rr_test_not_a_real_key' } });
    assert.equal(bad.code, 1);
    assert.deepEqual(
      (({ code, status }) => ({ code, status }))(jsonError(bad)),
      { code: 'invalid_api_key', status: 401 },
    );
    const outside = await ravenctl(['send', '--from', `sender@${relay.domain}`, '--to', 'ada@elsewhere.example', '--subject', 'x', '--text', 'x', '--json']);
    assert.equal(outside.code, 1);
    assert.equal(jsonError(outside).code, 'test_recipient_not_allowed');
    assert.equal(jsonError(outside).status, 422);
    const human = await ravenctl([...sendArgs(), '--no-json'], { env: { RAVEN_API_KEY: 'rr_test_not_a_real_key' } });
    assert.match(human.stderr, /^error: .+ \(invalid_api_key, request req_[^)]+\)$/m);
  });
});

describe('ravenctl emails', () => {
  test('get --json prints the EmailDetail as returned; human mode shows recipients and the timeline', async () => {
    const sent = json(await ravenctl([...sendArgs('carol', ['--cc', to('dave'), '--tag', 'campaign=spring']), '--wait', '--json']));
    const r = await ravenctl(['emails', 'get', sent.id, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const detail = json(r);
    assert.equal(detail.id, sent.id);
    assert.deepEqual(detail.to, [to('carol')]);
    assert.deepEqual(detail.cc, [to('dave')]);
    assert.deepEqual(detail.tags, { campaign: 'spring' });
    assert.equal(detail.idempotency_key, undefined);
    const human = await ravenctl(['emails', 'get', sent.id, '--no-json']);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /^Recipients$/m);
    assert.match(human.stdout, new RegExp(`${to('carol')} +to +delivered`));
    assert.match(human.stdout, /email\.queued/);
  });

  test('get of an unknown id exits 1 with not_found (404)', async () => {
    const r = await ravenctl(['emails', 'get', 'em_doesnotexist', '--json']);
    assert.equal(r.code, 1);
    assert.equal(jsonError(r).code, 'not_found');
    assert.equal(jsonError(r).status, 404);
  });

  test('list --json is {emails, next_cursor}; --cursor continues; --all follows every page', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await ravenctl([...sendArgs(`page${i}`), '--json'])).code, 0);
    const first = json(await ravenctl(['emails', 'list', '--limit', '2', '--json']));
    assert.deepEqual(Object.keys(first).sort(), ['emails', 'next_cursor']);
    assert.equal(first.emails.length, 2);
    assert.equal(typeof first.next_cursor, 'string');
    const second = json(await ravenctl(['emails', 'list', '--limit', '2', '--cursor', first.next_cursor, '--json']));
    assert.notEqual(second.emails[0].id, first.emails[0].id);
    const all = json(await ravenctl(['emails', 'list', '--all', '--limit', '2', '--json']));
    assert.equal(all.next_cursor, null);
    assert.ok(all.emails.length >= 3);
    assert.equal(new Set(all.emails.map((e: { id: string }) => e.id)).size, all.emails.length);
  });

  test('list filters by recipient; human mode shows the table and a next-page hint on stderr', async () => {
    const filtered = json(await ravenctl(['emails', 'list', '--recipient', to('page1'), '--json']));
    assert.ok(filtered.emails.length >= 1);
    assert.ok(filtered.emails.every((e: { to: string[] }) => e.to.includes(to('page1'))));
    const human = await ravenctl(['emails', 'list', '--limit', '1', '--no-json']);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /^ID +STATUS +TO +SUBJECT +CREATED$/m);
    assert.match(human.stderr, /^more: ravenctl emails list --limit 1 --cursor \S+$/m);
  });
});

describe('ravenctl relay (admin)', () => {
  test('workspace -> project -> domain -> key, then send with the new key', async () => {
    const ws = json(await ravenctl(['relay', 'workspaces', 'create', '--name', 'CLI Co', '--json']));
    assert.match(ws.id, /^ws_/);
    const list = json(await ravenctl(['relay', 'workspaces', 'list', '--json']));
    assert.ok(list.workspaces.some((w: { id: string }) => w.id === ws.id));
    const project = json(await ravenctl(['relay', 'projects', 'create', '--workspace', ws.id, '--name', 'web', '--environment', 'development', '--json']));
    assert.equal(project.environment, 'development');
    const domain = json(await ravenctl(['relay', 'domains', 'add', '--project', project.id, '--name', 'cli.test', '--json']));
    assert.equal(domain.status, 'pending');
    const verified = await ravenctl(['relay', 'domains', 'verify', domain.id, '--force', '--json']);
    assert.equal(verified.code, 0, verified.stderr);
    assert.equal(json(verified).status, 'verified');
    const key = json(await ravenctl(['relay', 'keys', 'create', '--project', project.id, '--name', 'cli', '--permission', 'email:send', '--json']));
    assert.match(key.key, /^rr_test_/);
    const keys = await ravenctl(['relay', 'keys', 'list', '--project', project.id, '--no-json']);
    assert.doesNotMatch(keys.stdout, new RegExp(key.key));
    const sent = await ravenctl(['send', '--from', 'me@cli.test', '--to', 'you@cli.test', '--subject', 'x', '--text', 'y', '--api-key', key.key, '--json']);
    assert.equal(sent.code, 0, sent.stderr);
    const revoked = await ravenctl(['relay', 'keys', 'revoke', key.id, '--json']);
    assert.equal(revoked.code, 0, revoked.stderr);
    const refused = await ravenctl(['emails', 'list', '--api-key', key.key, '--json']);
    assert.equal(refused.code, 1);
    assert.equal(jsonError(refused).code, 'invalid_api_key');
  });

  test('usage, captured messages, suppressions list/remove', async () => {
    const usage = json(await ravenctl(['relay', 'usage', '--workspace', relay.workspaceId, '--json']));
    assert.ok(usage.workspace.used >= 1);
    json(await ravenctl([...sendArgs('capture'), '--wait', '--json']));
    const messages = json(await ravenctl(['relay', 'messages', 'list', '--to', to('capture'), '--json']));
    assert.ok(messages.messages.length >= 1);
    const raw = await ravenctl(['relay', 'messages', 'raw', messages.messages[0].id, '--no-json']);
    assert.match(raw.stdout, /^Subject: Hello from ravenctl/m);
    const sup = json(await ravenctl(['relay', 'suppressions', 'list', '--workspace', relay.workspaceId, '--json']));
    assert.ok(Array.isArray(sup.suppressions));
    await ravenctl(['relay', 'suppressions', 'add', '--workspace', relay.workspaceId, '--email', to('temp'), '--json']);
    const removed = await ravenctl(['relay', 'suppressions', 'remove', '--workspace', relay.workspaceId, '--email', to('temp'), '--json']);
    assert.equal(removed.code, 0, removed.stderr);
  });

  test('reputation: a bounce through the local relay counts in every window; --json is the API document', async () => {
    const reputation = async () => json(await ravenctl(['relay', 'reputation', '--workspace', relay.workspaceId, '--json']));
    const dayOf = (doc: any) => doc.windows.find((w: { days: number }) => w.days === 1);
    const before = await reputation();
    // A tag of its own: bounced@ itself is suppressed by an earlier test's bounce.
    const bounced = await ravenctl([...sendArgs('bounced+reputation'), '--wait', '--json']);
    assert.equal(bounced.code, 1, bounced.stderr); // --wait exits 1 on a bounce
    assert.equal(json(bounced).status, 'bounced');
    const after = await reputation();
    assert.deepEqual(after, (await relay.admin('GET', `/admin/v1/workspaces/${relay.workspaceId}/reputation`)).body);
    assert.deepEqual(after.windows.map((w: { days: number }) => w.days), [1, 7, 30]);
    for (const [i, w] of after.windows.entries()) {
      assert.equal(w.bounced, before.windows[i].bounced + 1, JSON.stringify(w));
      assert.equal(w.sent, before.windows[i].sent + 1, JSON.stringify(w));
      assert.equal(w.bounce_rate, w.bounced / w.sent);
    }
    const day = dayOf(after);
    assert.equal(day.bounce_level, day.bounce_rate >= 0.1 ? 'at_risk' : day.bounce_rate >= 0.05 ? 'review' : 'ok');

    const human = await ravenctl(['relay', 'reputation', '--workspace', relay.workspaceId, '--no-json']);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /^SCOPE\s+WINDOW\s+SENT\s+BOUNCED\s+BOUNCE LEVEL\s+COMPLAINED\s+COMPLAINT LEVEL$/m);
    const pct = (day.bounce_rate * 100).toFixed(day.bounce_rate < 0.01 ? 2 : 1);
    const level = day.bounce_level.replace('_', ' ');
    assert.match(human.stdout, new RegExp(`^workspace\\s+1 day\\s+${day.sent}\\s+${day.bounced} \\(${pct.replace('.', '\\.')}%\\)\\s+${level}\\s+0 \\(0\\.0%\\)\\s+ok$`, 'm'));
    assert.match(human.stdout, /^workspace\s+30 days\s/m);

    const unknown = await ravenctl(['relay', 'reputation', '--workspace', 'ws_unknown', '--json']);
    assert.equal(unknown.code, 1);
    assert.equal(jsonError(unknown).status, 404);
  });

  test('a wrong admin token exits 1 with the API code and status', async () => {
    const r = await ravenctl(['relay', 'workspaces', 'list', '--admin-token', 'wrong', '--json']);
    assert.equal(r.code, 1);
    assert.equal(jsonError(r).status, 401);
  });
});
