// Three relays (separate processes) on one PostgreSQL database behave as one service: one queue
// (each email delivered once), one idempotency store, one set of rate windows, one webhook outbox
// (each attempt made by one relay). Issue 14, "Several relays, one database".
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import nodemailer from 'nodemailer';
import type { RelayProcess } from '../helpers/relay-process.js';
import { startReceiver, type Receiver } from '../helpers/webhooks.js';
import { call, createProjectWithKey } from '../helpers/start-relay.js';
import { ADMIN_TOKEN, inParallel, startCluster, waitFor, type Cluster } from '../helpers/postgres-cluster.js';

describe('three relays on one database', () => {
  let cluster: Cluster;
  before(async () => {
    cluster = await startCluster({ relays: 3, config: { delivery: { concurrency: 16 } } });
  });
  after(async () => {
    await cluster?.stop();
  });

  test('5,000 emails sent round-robin through the three are each delivered exactly once', async () => {
    const TOTAL = 5_000;
    const ids = await inParallel(TOTAL, 48, async (i) => {
      const res = await cluster.send(i % 3, { to: `user+${i}@${cluster.domain}` });
      assert.equal(res.status, 202, res.text);
      return res.body.id as string;
    });
    assert.equal(new Set(ids).size, TOTAL);
    await waitFor(
      'every email delivered',
      async () => {
        const [row] = await cluster.sql<{ n: number }>("SELECT COUNT(*)::int AS n FROM recipients WHERE status <> 'delivered'");
        return row!.n === 0;
      },
      240_000,
    );
    // Captured by the sinks: exactly one message per email, none twice.
    const captured = await cluster.sql<{ email_id: string; n: number }>(
      'SELECT email_id, COUNT(*)::int AS n FROM captured_messages GROUP BY email_id',
    );
    assert.equal(captured.length, TOTAL, 'one captured message per email');
    assert.deepEqual(captured.filter((c) => c.n !== 1), [], 'no email delivered twice');
    const events = await cluster.sql<{ n: number }>("SELECT COUNT(*)::int AS n FROM events WHERE type = 'email.delivered'");
    assert.equal(events[0]!.n, TOTAL, 'one delivered event per email');
    // All three relays took part in the dispatching.
    const jobs = await cluster.sql<{ state: string; n: number }>('SELECT state, COUNT(*)::int AS n FROM jobs GROUP BY state');
    assert.deepEqual(jobs, [{ state: 'done', n: TOTAL }]);
  });

  test('50 concurrent sends with one Idempotency-Key, spread over the three, give one email', async () => {
    const body = { to: `idem@${cluster.domain}`, subject: 'Once' };
    const results = await inParallel(50, 50, (i) => cluster.send(i % 3, body, { idempotencyKey: 'one-key-three-relays' }));
    for (const r of results) assert.ok(r.status === 202, r.text);
    const ids = new Set(results.map((r) => r.body.id));
    assert.equal(ids.size, 1, `one email id for all 50: ${[...ids].join(', ')}`);
    const rows = await cluster.sql("SELECT id FROM emails WHERE subject = 'Once'");
    assert.equal(rows.length, 1);
  });

  test('each webhook attempt is made by exactly one relay', async () => {
    // A project of its own: an endpoint of the bootstrap project would also get the events of the
    // earlier tests' emails that happen after its creation (the 'Once' email above is not waited
    // for, and under load was delivered seconds later: a 121st delivery, so never exactly 120).
    const project = await createProjectWithKey({ workspaceId: cluster.workspaceId, admin: (method, p, body) => cluster.admin(0, method, p, body) });
    const receiver: Receiver = await startReceiver();
    try {
      const created = await cluster.admin(0, 'POST', `/admin/v1/projects/${project.projectId}/webhooks`, {
        url: receiver.url,
        events: ['email.queued', 'email.delivered'],
      });
      assert.equal(created.status, 201, created.text);
      const N = 60;
      await inParallel(N, 12, async (i) => {
        const fields = { from: `Raven <sender@${project.domain}>`, to: `hook${i}@${project.domain}`, subject: 'Hooked' };
        const res = await cluster.send(i % 3, fields, { key: project.key });
        assert.equal(res.status, 202, res.text);
      });
      await receiver.waitForCount(2 * N, 60_000);
      // The outbox agrees: every delivery made once, on its first attempt.
      await waitFor('every delivery recorded', async () => {
        const [row] = await cluster.sql<{ n: number }>(
          "SELECT COUNT(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 AND state = 'delivered'",
          [created.body.id],
        );
        return row!.n === 2 * N;
      }).catch(async (error: Error) => {
        // Seen once in CI (every request received, not every delivery recorded within 60 s): say
        // where the others stand, so a recurrence tells a lost outcome from a slow or repeated one.
        const byState = await cluster.sql(
          'SELECT state, attempts, COUNT(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 GROUP BY state, attempts ORDER BY state, attempts',
          [created.body.id],
        );
        throw new Error(`${error.message}: deliveries by state and attempts ${JSON.stringify(byState)}, requests received ${receiver.requests.length}`);
      });
      const eventIds = receiver.requests.map((r) => String(r.headers['service-event-id']));
      assert.equal(eventIds.length, 2 * N, 'no request beyond one per event');
      assert.equal(new Set(eventIds).size, 2 * N, 'no event sent twice');
      const attempts = await cluster.sql<{ n: number }>(
        'SELECT COUNT(*)::int AS n FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.webhook_id = $1',
        [created.body.id],
      );
      assert.equal(attempts[0]!.n, 2 * N, 'one recorded attempt per delivery');
    } finally {
      await receiver.close();
    }
  });

  test('a delivery left under the lease of a relay that died mid-attempt is sent when the lease runs out', async () => {
    const project = await createProjectWithKey({ workspaceId: cluster.workspaceId, admin: (method, p, body) => cluster.admin(0, method, p, body) });
    const receiver: Receiver = await startReceiver();
    try {
      const created = await cluster.admin(0, 'POST', `/admin/v1/projects/${project.projectId}/webhooks`, { url: receiver.url, events: ['email.queued'] });
      assert.equal(created.status, 201, created.text);
      // Disabled while its delivery is given the lease a relay killed during its attempt leaves
      // behind (a few seconds of it left; a real one lasts the 10 s time-out plus 10 s).
      assert.equal((await cluster.admin(0, 'POST', `/admin/v1/webhooks/${created.body.id}/disable`)).status, 200);
      const sent = await cluster.send(0, { from: `Raven <sender@${project.domain}>`, to: `lease@${project.domain}` }, { key: project.key });
      assert.equal(sent.status, 202, sent.text);
      const leased = await cluster.sql('UPDATE webhook_deliveries SET lease_expires_at = $1 WHERE webhook_id = $2 RETURNING id', [
        new Date(Date.now() + 3_000).toISOString(),
        created.body.id,
      ]);
      assert.equal(leased.length, 1);
      // Enabling wakes every relay: each finds the row under the lease, and nothing else wakes them
      // (no other delivery is pending; the idle timer is a minute). The wait is half of that.
      assert.equal((await cluster.admin(0, 'POST', `/admin/v1/webhooks/${created.body.id}/enable`)).status, 200);
      await receiver.waitForCount(1, 30_000);
      await waitFor('the delivery recorded', async () => {
        const [row] = await cluster.sql<{ state: string; attempts: number }>('SELECT state, attempts FROM webhook_deliveries WHERE webhook_id = $1', [created.body.id]);
        return row!.state === 'delivered' && row!.attempts === 1;
      });
      assert.equal(receiver.requests.length, 1);
    } finally {
      await receiver.close();
    }
  });
});

describe('dashboard sessions across relays', () => {
  let cluster: Cluster;
  before(async () => {
    cluster = await startCluster({ relays: 3 });
  });
  after(async () => {
    await cluster?.stop();
  });

  test("a wait on one relay is woken by a message another relay's sink captures", async () => {
    const [a, b] = cluster.relays as [RelayProcess, RelayProcess];
    const to = `cross-relay-${Date.now()}@elsewhere.test`;
    const waiting = call(a.httpUrl, 'GET', `/admin/v1/messages/wait?to=${to}&timeout=60`, { token: ADMIN_TOKEN });
    // Sent only once relay a holds the wait (its /metrics gauge), so only a wake-up can answer it.
    await waitFor('the wait is open on relay a', async () => {
      const res = await call(a.httpUrl, 'GET', '/metrics');
      return /^raven_message_waits 1$/m.test(res.text);
    });
    const sink = new URL(String(b.ready.smtp_url));
    const transport = nodemailer.createTransport({ host: sink.hostname, port: Number(sink.port), ignoreTLS: true });
    try {
      await transport.sendMail({ from: 'app@elsewhere.test', to, subject: 'Across relays', text: 'Your code is 482913.' });
    } finally {
      transport.close();
    }
    const woken = await waiting;
    assert.equal(woken.status, 200, woken.text);
    assert.equal(woken.body.subject, 'Across relays');
    assert.deepEqual(woken.body.codes, ['482913']);
  });

  test('a session opened on one relay works on the others and ends on all at sign-out; a printed link works once anywhere', async () => {
    const [a, b, c] = cluster.relays.map((r) => r.httpUrl) as [string, string, string];
    const signedIn = await call(a, 'POST', '/admin/v1/session', { body: { token: ADMIN_TOKEN } });
    assert.equal(signedIn.status, 201, signedIn.text);
    const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
    const csrf = signedIn.body.csrf_token as string;
    const created = await call(b, 'POST', '/admin/v1/workspaces', { headers: { cookie, 'x-raven-csrf': csrf }, body: { name: 'via relay b' } });
    assert.equal(created.status, 201, 'relay b honours the session and its CSRF token');
    assert.equal((await call(c, 'DELETE', '/admin/v1/session', { headers: { cookie, 'x-raven-csrf': csrf } })).status, 204);
    for (const url of [a, b, c]) assert.equal((await call(url, 'GET', '/admin/v1/session', { headers: { cookie } })).status, 401);

    // The link relay a printed at start, redeemed through relay c: once.
    const link = new URL(String(cluster.relays[0]!.ready.dashboard_url)).hash.replace('#signin=', '');
    assert.equal((await call(c, 'POST', '/admin/v1/session', { body: { signin_link: link } })).status, 201);
    assert.equal((await call(b, 'POST', '/admin/v1/session', { body: { signin_link: link } })).status, 401);
  });
});

describe('rate limits across relays', () => {
  let cluster: Cluster;
  before(async () => {
    // The specification's 15 accepted requests per minute for a development key.
    cluster = await startCluster({ relays: 3, config: { limits: { testKeyPerMinute: 15 } } });
  });
  after(async () => {
    await cluster?.stop();
  });

  test("a development key's 15 per minute hold across three relays", async () => {
    const results = await inParallel(45, 45, (i) => cluster.send(i % 3, { subject: `rate ${i}` }));
    const accepted = results.filter((r) => r.status === 202);
    const limited = results.filter((r) => r.status === 429);
    assert.equal(accepted.length + limited.length, 45, results.map((r) => r.status).join(','));
    assert.equal(accepted.length, 15, 'exactly the window, whichever relay answered');
    for (const r of limited) {
      assert.equal(r.body.error.code, 'rate_limit_exceeded');
      assert.ok(Number(r.headers.get('retry-after')) >= 1);
    }
    // Every relay refuses the next one too: the window is the database's, not a process's.
    for (const i of [0, 1, 2]) assert.equal((await cluster.send(i)).status, 429);
  });
});
