// The admin API for webhook endpoints: create (secret once, sealed at rest), list, delete,
// deliveries, validation, and the URL policy of a relay that does not allow local webhooks.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';
import { createEndpoint } from '../helpers/webhooks.js';

describe('admin webhook endpoints (development relay: local webhooks allowed)', () => {
  let t: TestRelay;
  before(async () => {
    t = await startTestRelay();
  });
  after(() => t.stop());

  test('create answers 201 with the secret once; list never shows it; the database holds it sealed', async () => {
    const res = await t.admin('POST', `/admin/v1/projects/${t.projectId}/webhooks`, {
      url: 'http://127.0.0.1:9/hook',
      events: ['email.delivered', 'email.bounced'],
    });
    assert.equal(res.status, 201, res.text);
    assert.match(res.body.id, /^whk_[0-9a-z]{26}$/);
    assert.match(res.body.secret, /^whsec_[A-Za-z0-9_-]{20,}$/);
    assert.equal(res.body.project_id, t.projectId);
    assert.equal(res.body.url, 'http://127.0.0.1:9/hook');
    assert.deepEqual(res.body.events, ['email.delivered', 'email.bounced']);
    assert.ok(res.headers.get('request-id'));

    const list = await t.admin('GET', `/admin/v1/projects/${t.projectId}/webhooks`);
    assert.equal(list.status, 200);
    const listed = list.body.webhooks.find((w: { id: string }) => w.id === res.body.id);
    assert.deepEqual(Object.keys(listed).sort(), ['created_at', 'enabled', 'events', 'id', 'project_id', 'url']);
    assert.equal(listed.enabled, true);
    assert.ok(!list.text.includes(res.body.secret));

    const row = await t.relay.services.db.get<{ secret_enc: string }>('SELECT secret_enc FROM webhooks WHERE id = ?', [res.body.id]);
    assert.ok(row && !row.secret_enc.includes(res.body.secret), 'the secret is not stored in the clear');
    assert.equal(t.relay.services.secrets.open(row.secret_enc), res.body.secret);
  });

  test('["*"] subscribes to everything; duplicates collapse', async () => {
    const all = await createEndpoint(t, 'http://127.0.0.1:9/all', ['*']);
    assert.deepEqual(all.events, ['*']);
    const dup = await createEndpoint(t, 'http://127.0.0.1:9/dup', ['email.sent', 'email.sent']);
    assert.deepEqual(dup.events, ['email.sent']);
  });

  test('validation errors name each field', async () => {
    const cases: Array<[unknown, string[]]> = [
      [{}, ['events', 'url']],
      [{ url: 'http://127.0.0.1:9/', events: [] }, ['events']],
      [{ url: 'http://127.0.0.1:9/', events: ['email.opened'] }, ['events[0]']],
      [{ url: 'http://127.0.0.1:9/', events: ['*', 'email.sent'] }, ['events']],
      [{ url: 'http://127.0.0.1:9/', events: ['*'], secret: 'mine' }, ['secret']],
      [{ url: 42, events: ['*'] }, ['url']],
      [{ url: 'ftp://127.0.0.1/', events: ['*'] }, ['url']],
      [{ url: 'http://u:p@127.0.0.1:9/', events: ['*'] }, ['url']],
      [{ url: 'http://169.254.169.254/latest', events: ['*'] }, ['url']],
    ];
    for (const [body, fields] of cases) {
      const res = await t.admin('POST', `/admin/v1/projects/${t.projectId}/webhooks`, body);
      assert.equal(res.status, 422, `${JSON.stringify(body)} -> ${res.text}`);
      assert.equal(res.body.error.code, 'validation_error');
      assert.deepEqual(res.body.error.details.map((d: { field: string }) => d.field).sort(), fields, JSON.stringify(body));
    }
  });

  test('unknown project and unknown endpoint are not_found; bad JSON is invalid_request', async () => {
    const create = await t.admin('POST', '/admin/v1/projects/prj_nope/webhooks', { url: 'http://127.0.0.1:9/', events: ['*'] });
    assert.equal(create.status, 404);
    assert.equal(create.body.error.code, 'not_found');
    assert.equal((await t.admin('GET', '/admin/v1/projects/prj_nope/webhooks')).status, 404);
    assert.equal((await t.admin('DELETE', '/admin/v1/webhooks/whk_nope')).status, 404);
    assert.equal((await t.admin('GET', '/admin/v1/webhooks/whk_nope/deliveries')).status, 404);
    const bad = await t.admin('POST', `/admin/v1/projects/${t.projectId}/webhooks`, '{"url":');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'invalid_request');
  });

  test('a body that is JSON but not an object (null included) is invalid_request', async () => {
    const hook = await t.admin('POST', `/admin/v1/projects/${t.projectId}/webhooks`, { url: 'http://127.0.0.1:9/', events: ['*'] });
    for (const body of ['null', '[]', '"x"', '1']) {
      for (const path of [`/admin/v1/projects/${t.projectId}/webhooks`, `/admin/v1/webhooks/${hook.body.id}/rotate-secret`]) {
        const res = await t.admin('POST', path, body);
        assert.equal(res.status, 400, `${path} ${body} -> ${res.text}`);
        assert.equal(res.body.error.code, 'invalid_request');
      }
    }
  });

  test('the admin token is required', async () => {
    const res = await t.api('GET', `/admin/v1/projects/${t.projectId}/webhooks`);
    assert.equal(res.status, 401);
    assert.equal(res.body.error.code, 'unauthorized');
  });

  test('delete answers 204, then the endpoint is gone and its pending deliveries abandoned', async () => {
    const hook = await createEndpoint(t, 'http://127.0.0.1:9/gone', ['email.queued']);
    const del = await t.admin('DELETE', `/admin/v1/webhooks/${hook.id}`);
    assert.equal(del.status, 204);
    assert.equal(del.text, '');
    assert.equal((await t.admin('DELETE', `/admin/v1/webhooks/${hook.id}`)).status, 404);
    const list = await t.admin('GET', `/admin/v1/projects/${t.projectId}/webhooks`);
    assert.ok(!list.body.webhooks.some((w: { id: string }) => w.id === hook.id));
    // A new event creates no delivery for the deleted endpoint.
    const sent = await t.send();
    assert.equal(sent.status, 202);
    const rows = await t.relay.services.db.all('SELECT * FROM webhook_deliveries WHERE webhook_id = ?', [hook.id]);
    assert.equal(rows.length, 0);
  });

  test('deliveries of an endpoint with no attempts yet: an empty list', async () => {
    const hook = await createEndpoint(t, 'http://127.0.0.1:9/none', ['email.bounced']);
    const res = await t.admin('GET', `/admin/v1/webhooks/${hook.id}/deliveries`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { deliveries: [] });
  });
});

describe('URL policy of a relay without local webhooks', () => {
  let t: TestRelay;
  before(async () => {
    t = await startTestRelay({
      overrides: (c) => {
        c.allowLocalWebhooks = false;
      },
    });
  });
  after(() => t.stop());

  const refused = [
    'http://hooks.example.com/raven', // not https
    'https://hooks.example.com:8443/raven', // not port 443
    'https://user:secret@hooks.example.com/raven', // userinfo
    'https://10.0.0.1/hook',
    'https://127.0.0.1/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://0x7f000001/hook',
    'https://2130706433/hook',
    'https://169.254.169.254/latest/meta-data/',
    'https://[::1]/hook',
    'https://localhost/hook',
    'https://100.64.0.1/hook', // CGNAT
    'https://[fd00:ec2::254]/', // IPv6 metadata
    'http://127.0.0.1:3000/hook', // fine in development mode, not here
  ];
  for (const url of refused) {
    test(`refuses ${url}`, async () => {
      const res = await t.admin('POST', `/admin/v1/projects/${t.projectId}/webhooks`, { url, events: ['*'] });
      assert.equal(res.status, 422, res.text);
      assert.equal(res.body.error.code, 'validation_error');
      assert.deepEqual(res.body.error.details.map((d: { field: string }) => d.field), ['url']);
    });
  }

  test('nothing was stored', async () => {
    const list = await t.admin('GET', `/admin/v1/projects/${t.projectId}/webhooks`);
    assert.deepEqual(list.body.webhooks, []);
  });
});
