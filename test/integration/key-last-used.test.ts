// An API key's last use, as the admin key list and the dashboard show it: written when the key
// authenticates, refused requests left out, at most once a minute per key and relay.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createProjectWithKey, startTestRelay, type TestRelay } from '../helpers/start-relay.js';

describe('API key last use', () => {
  let t: TestRelay;
  before(async () => {
    t = await startTestRelay({ flags: { testClock: true } });
  });
  after(() => t?.stop());

  async function keyRow(projectId: string, keyId: string) {
    const list = await t.admin('GET', `/admin/v1/projects/${projectId}/keys`);
    assert.equal(list.status, 200, list.text);
    return list.body.keys.find((k: { id: string }) => k.id === keyId);
  }

  /** The use is written in the next group commit, after the request's answer: wait for it. */
  async function lastUseAfter(projectId: string, keyId: string, previous: string | null): Promise<string> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const { last_used_at } = await keyRow(projectId, keyId);
      if (last_used_at !== null && last_used_at !== previous) return last_used_at;
      assert.ok(Date.now() < deadline, `the use of ${keyId} was never recorded (still ${last_used_at})`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  it('is null for a new key, set by an accepted request and moved by a use a minute later', async () => {
    const { projectId, keyId, key } = await createProjectWithKey(t);
    assert.equal((await keyRow(projectId, keyId)).last_used_at, null);

    const listed = await t.api('GET', '/v1/emails', { key });
    assert.equal(listed.status, 200, listed.text);
    const first = await lastUseAfter(projectId, keyId, null);
    const clock = await t.admin('GET', '/admin/v1/clock');
    assert.ok(first <= clock.body.now, `${first} is not after the relay's clock ${clock.body.now}`);

    const advanced = await t.admin('POST', '/admin/v1/clock/advance', { seconds: 120 });
    assert.equal(advanced.status, 200, advanced.text);
    assert.equal((await t.api('GET', '/v1/emails', { key })).status, 200);
    const second = await lastUseAfter(projectId, keyId, first);
    assert.ok(second > first, `${second} should be later than ${first}`);
  });

  it('is not touched by a request the key is refused for', async () => {
    const { projectId, keyId, key } = await createProjectWithKey(t);
    const revoked = await t.admin('DELETE', `/admin/v1/keys/${keyId}`);
    assert.equal(revoked.status, 204, revoked.text);
    const refused = await t.api('GET', '/v1/emails', { key });
    assert.equal(refused.status, 401);
    // Barrier: a use by another key, written after the refused request, has committed.
    const other = await createProjectWithKey(t);
    assert.equal((await t.api('GET', '/v1/emails', { key: other.key })).status, 200);
    await lastUseAfter(other.projectId, other.keyId, null);
    assert.equal((await keyRow(projectId, keyId)).last_used_at, null);
  });
});
