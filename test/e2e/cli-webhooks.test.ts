// ravenctl webhooks sign / verify, spawned as a real process, with the CONTRACT section 5 vectors.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { ravenctl as run, type RavenctlRun } from '../helpers/ravenctl.js';

const dir = mkdtempSync(join(tmpdir(), 'ravenctl-webhooks-'));
after(() => rmSync(dir, { recursive: true, force: true }));


function ravenctl(args: string[], input?: string | Buffer): Promise<RavenctlRun> {
  return run(args, { env: { HOME: dir, XDG_CONFIG_HOME: dir }, input });
}

const SECRET = 'whsec_test_secret';
const TS = '1614265330';
const VECTORS = [
  {
    body: '{"id":"evt_01","type":"email.delivered","data":{"message_id":"msg_01"}}',
    signature: 'v1=09859c4a61a2bbdc7acf4c0c7e1f9114801a0785aad0115088fa3190f7470720',
  },
  { body: '{"subject":"héllo ✓"}', signature: 'v1=62c0f85e165015fd3cfa31be47f2763799405a50c92446469d2477889ba58117' },
];
const files = VECTORS.map((v, i) => {
  const file = join(dir, `body-${i}.json`);
  writeFileSync(file, v.body, 'utf8');
  return file;
});

describe('ravenctl webhooks sign', () => {
  test('prints the two headers for the contract vectors (human output)', async () => {
    for (const [i, v] of VECTORS.entries()) {
      const r = await ravenctl(['webhooks', 'sign', '--no-json', '--secret', SECRET, '--timestamp', TS, '--body-file', files[i]!]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `Service-Timestamp: ${TS}\nService-Signature: ${v.signature}\n`);
      assert.equal(r.stderr, '');
    }
  });
  test('--json prints {"timestamp","signature"}; the body may come from stdin', async () => {
    const r = await ravenctl(['webhooks', 'sign', '--secret', SECRET, '--timestamp', TS, '--json'], VECTORS[1]!.body);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { timestamp: TS, signature: VECTORS[1]!.signature });
  });
  test('global flags work before the subcommand too', async () => {
    const r = await ravenctl(['--json', 'webhooks', 'sign', '--secret', SECRET, '--timestamp', TS, '--body-file', files[0]!]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { timestamp: TS, signature: VECTORS[0]!.signature });
  });
  test('without --timestamp it signs with the current time', async () => {
    const before = Math.floor(Date.now() / 1000);
    const r = await ravenctl(['webhooks', 'sign', '--secret', SECRET, '--json'], '{}');
    assert.equal(r.code, 0, r.stderr);
    const { timestamp, signature } = JSON.parse(r.stdout) as { timestamp: string; signature: string };
    assert.match(timestamp, /^\d+$/);
    assert.ok(Number(timestamp) >= before && Number(timestamp) <= before + 60);
    assert.match(signature, /^v1=[0-9a-f]{64}$/);
  });
  test('a missing --secret or a bad --timestamp is a usage error (exit 2)', async () => {
    const missing = await ravenctl(['webhooks', 'sign', '--json'], '{}');
    assert.equal(missing.code, 2);
    assert.equal(JSON.parse(missing.stderr).error.code, 'usage_error');
    const bad = await ravenctl(['webhooks', 'sign', '--secret', SECRET, '--timestamp', '12a'], '{}');
    assert.equal(bad.code, 2);
  });
});

describe('ravenctl webhooks verify', () => {
  const now = String(Number(TS) + 10);

  test('valid vectors: exit 0, "signature valid" or {"valid":true,"event"}', async () => {
    for (const [i, v] of VECTORS.entries()) {
      const human = await ravenctl(['webhooks', 'verify', '--no-json', '--secret', SECRET, '--timestamp', TS, '--signature', v.signature, '--now', now, '--body-file', files[i]!]);
      assert.equal(human.code, 0, human.stderr);
      assert.equal(human.stdout, 'signature valid\n');
      const json = await ravenctl(['webhooks', 'verify', '--json', '--secret', SECRET, '--timestamp', TS, '--signature', v.signature, '--now', now], v.body);
      assert.equal(json.code, 0, json.stderr);
      assert.deepEqual(JSON.parse(json.stdout), { valid: true, event: JSON.parse(v.body) });
    }
  });
  test('a wrong signature exits 1 with bad_signature; JSON errors go to stderr, stdout stays empty', async () => {
    const wrong = VECTORS[0]!.signature.replace(/0$/, '1');
    const r = await ravenctl(['webhooks', 'verify', '--json', '--secret', SECRET, '--timestamp', TS, '--signature', wrong, '--now', now, '--body-file', files[0]!]);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    const { error } = JSON.parse(r.stderr) as { error: { code: string; message: string; status: null } };
    assert.equal(error.code, 'bad_signature');
    assert.equal(error.status, null);
    assert.equal(typeof error.message, 'string');
  });
  test('human failure is one line on stderr naming the reason', async () => {
    const r = await ravenctl(['webhooks', 'verify', '--no-json', '--secret', 'other', '--timestamp', TS, '--signature', VECTORS[0]!.signature, '--now', now, '--body-file', files[0]!]);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^error: .+ \(bad_signature\)\n$/);
  });
  test('a stale or future timestamp exits 1 (timestamp_too_old / timestamp_too_new); --tolerance widens it', async () => {
    const args = ['webhooks', 'verify', '--json', '--secret', SECRET, '--timestamp', TS, '--signature', VECTORS[0]!.signature, '--body-file', files[0]!];
    const old = await ravenctl([...args, '--now', String(Number(TS) + 301)]);
    assert.equal(old.code, 1);
    assert.equal(JSON.parse(old.stderr).error.code, 'timestamp_too_old');
    const future = await ravenctl([...args, '--now', String(Number(TS) - 301)]);
    assert.equal(future.code, 1);
    assert.equal(JSON.parse(future.stderr).error.code, 'timestamp_too_new');
    const wide = await ravenctl([...args, '--now', String(Number(TS) + 301), '--tolerance', '600']);
    assert.equal(wide.code, 0, wide.stderr);
    // Without --now the real clock is used: the 2021 vector is far too old.
    const real = await ravenctl(args);
    assert.equal(real.code, 1);
    assert.equal(JSON.parse(real.stderr).error.code, 'timestamp_too_old');
  });
  test('a malformed signature or timestamp exits 1 with bad_format', async () => {
    const r = await ravenctl(['webhooks', 'verify', '--json', '--secret', SECRET, '--timestamp', TS, '--signature', 'v1=XYZ', '--now', now], VECTORS[0]!.body);
    assert.equal(r.code, 1);
    assert.equal(JSON.parse(r.stderr).error.code, 'bad_format');
    const ts = await ravenctl(['webhooks', 'verify', '--json', '--secret', SECRET, '--timestamp', 'soon', '--signature', VECTORS[0]!.signature, '--now', now], VECTORS[0]!.body);
    assert.equal(ts.code, 1);
    assert.equal(JSON.parse(ts.stderr).error.code, 'bad_format');
  });
  test('several v1= entries (secret rotation) pass when one matches', async () => {
    const rotated = `v1=${'0'.repeat(64)},${VECTORS[0]!.signature}`;
    const r = await ravenctl(['webhooks', 'verify', '--json', '--secret', SECRET, '--timestamp', TS, '--signature', rotated, '--now', now, '--body-file', files[0]!]);
    assert.equal(r.code, 0, r.stderr);
  });
  test('an authentic body that is not JSON is valid with event null', async () => {
    const body = 'not json';
    const signed = await ravenctl(['webhooks', 'sign', '--json', '--secret', SECRET, '--timestamp', TS], body);
    const { signature } = JSON.parse(signed.stdout) as { signature: string };
    const r = await ravenctl(['webhooks', 'verify', '--json', '--secret', SECRET, '--timestamp', TS, '--signature', signature, '--now', now], body);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { valid: true, event: null });
  });
  test('sign then verify round-trips through the current time', async () => {
    const body = '{"id":"evt_x","type":"email.sent"}';
    const signed = JSON.parse((await ravenctl(['webhooks', 'sign', '--json', '--secret', SECRET], body)).stdout) as { timestamp: string; signature: string };
    const r = await ravenctl(['webhooks', 'verify', '--secret', SECRET, '--timestamp', signed.timestamp, '--signature', signed.signature, '--json'], body);
    assert.equal(r.code, 0, r.stderr);
  });
  test('missing --signature is a usage error (exit 2)', async () => {
    const r = await ravenctl(['webhooks', 'verify', '--json', '--secret', SECRET, '--timestamp', TS], '{}');
    assert.equal(r.code, 2);
    assert.equal(JSON.parse(r.stderr).error.code, 'usage_error');
  });
});
