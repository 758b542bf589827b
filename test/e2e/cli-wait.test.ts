// ravenctl relay messages wait (CONTRACT section 10) as a shell test uses it:
// LINK=$(ravenctl relay messages wait --to ... --extract link), in a real shell pipeline.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ravenctl, ravenctlCommand, ravenctlEnv } from '../helpers/ravenctl.js';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';

const bin = mkdtempSync(join(tmpdir(), 'ravenctl-bin-'));
after(() => rmSync(bin, { recursive: true, force: true }));

/** Runs a shell script with `ravenctl` on its PATH (a wrapper around the sources). */
function sh(script: string, env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // In the wrapper's folder, never the checkout (whose ./.raven may hold a developer's admin token).
    execFile('/bin/sh', ['-c', script], { cwd: bin, env: ravenctlEnv({ ...env, PATH: `${bin}:${process.env.PATH ?? ''}` }, bin) }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('ravenctl relay messages wait', () => {
  let t: TestRelay;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    t = await startTestRelay();
    env = { RAVEN_BASE_URL: t.url, RAVEN_ADMIN_TOKEN: t.adminToken };
    const quoted = ravenctlCommand([]).map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    writeFileSync(join(bin, 'ravenctl'), `#!/bin/sh\nexec ${quoted} "$@"\n`);
    chmodSync(join(bin, 'ravenctl'), 0o755);
  });
  after(() => t.stop());

  test('LINK=$(... --extract link) in a pipeline gets the link of a mail sent while it waits', async () => {
    const to = `shell@${t.domain}`;
    const script = `LINK=$(ravenctl relay messages wait --to ${to} --timeout 60 --extract link) || exit 7
echo "link=$LINK"
CODE=$(ravenctl relay messages wait --to ${to} --extract code) && echo "code=$CODE"`;
    const running = sh(script, env);
    while (t.relay.services.messageWaits.size === 0) await new Promise((r) => setTimeout(r, 20));
    const sent = await t.send({
      to,
      subject: 'Confirm your address',
      html: '<p>Your confirmation code is <b>604112</b>.</p><p><a href="https://app.test/confirm?t=abc">Confirm</a></p>',
    });
    assert.equal(sent.status, 202, sent.text);
    const { code, stdout, stderr } = await running;
    assert.equal(code, 0, stderr);
    assert.equal(stdout, 'link=https://app.test/confirm?t=abc\ncode=604112\n');
  });

  test('--json prints the detail; no message in time, or nothing to extract, exits 1', async () => {
    const to = `plain@${t.domain}`;
    await t.waitForFinal((await t.send({ to, subject: 'No links here', text: 'Hello.' })).body.id);
    const json = await ravenctl(['relay', 'messages', 'wait', '--to', to, '--json'], { env });
    assert.equal(json.code, 0, json.stderr);
    const detail = JSON.parse(json.stdout);
    assert.equal(detail.subject, 'No links here');
    assert.deepEqual(detail.links, []);
    assert.equal(detail.project_id, t.projectId);

    const nothing = await ravenctl(['relay', 'messages', 'wait', '--to', to, '--extract', 'link'], { env });
    assert.equal(nothing.code, 1);
    assert.equal(nothing.stdout, '');
    assert.match(nothing.stderr, /no http\(s\) link/);

    const timedOut = await ravenctl(['relay', 'messages', 'wait', '--to', `never@${t.domain}`, '--timeout', '1', '--json'], { env });
    assert.equal(timedOut.code, 1);
    assert.equal(JSON.parse(timedOut.stderr).error.code, 'wait_timeout');

    const usage = await ravenctl(['relay', 'messages', 'wait', '--timeout', '0'], { env });
    assert.equal(usage.code, 2);
  });

  test('relay messages list --project lists only that project', async () => {
    const listed = await ravenctl(['relay', 'messages', 'list', '--project', t.projectId, '--json'], { env });
    assert.equal(listed.code, 0, listed.stderr);
    const { messages } = JSON.parse(listed.stdout);
    assert.ok(messages.length > 0);
    for (const m of messages) assert.equal(m.project_id, t.projectId);
  });
});
