// Connecting domains through the admin API: a name is connected to a project once, even when two
// requests race (the database decides, so two relays on one database agree too).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';

let t: TestRelay;

before(async () => {
  t = await startTestRelay();
});

after(async () => {
  await t.stop();
});

test('a domain connected twice at once to one project: one 201, the others a validation error', async () => {
  const name = `race${Math.random().toString(36).slice(2, 8)}.test`;
  const answers = await Promise.all(
    Array.from({ length: 4 }, () => t.admin('POST', `/admin/v1/projects/${t.projectId}/domains`, { name })),
  );
  assert.deepEqual(answers.map((a) => a.status).sort(), [201, 422, 422, 422], answers.map((a) => a.text).join('\n'));
  for (const refused of answers.filter((a) => a.status === 422)) {
    assert.equal(refused.body.error.code, 'validation_error');
    assert.deepEqual(refused.body.error.details, [{ field: 'name', message: 'is already connected to this project' }]);
  }
  const list = await t.admin('GET', `/admin/v1/projects/${t.projectId}/domains`);
  assert.equal(list.body.domains.filter((d: { name: string }) => d.name === name).length, 1);
});
