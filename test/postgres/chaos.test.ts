// Chaos (issue 24, "Reliability"): three relays on one PostgreSQL database under load, each killed
// with SIGKILL and started again in turn, and the PostgreSQL server restarted once. Clients send
// through the HTTP API as the specification tells them to: a fresh Idempotency-Key per email, the
// same key and body again after a network error or a 503, on another relay. Afterwards:
// - every acknowledged email (each 202) is in the database, and ends delivered or delivery_unknown;
// - no recipient reached a sink twice (captured messages counted per email and recipient); one the
//   relay calls delivered reached it exactly once, one delivery_unknown at most once;
// - one Idempotency-Key, one email, whichever relays answered it;
// - every delivered and delivery_unknown event of the production project reached its webhook
//   endpoint (at least once, as a webhook may be: the same bytes each time);
// - the rate windows (per key per second, per workspace per second, per development key per
//   minute) and a development key's monthly quota were never exceeded, each was reached, and the
//   usage counters charge exactly the recipients of the emails admitted.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startPostgresServer, type PostgresServer } from '../helpers/postgres-server.js';
import { startCluster, waitFor, type Cluster } from '../helpers/postgres-cluster.js';
import { fullestWindow } from '../helpers/sliding-window.js';
import { startReceiver, type Receiver } from '../helpers/webhooks.js';

const LIMITS = {
  // The two production keys together stay under the workspace's window, which the development
  // keys' sends fill now and then: each window is reached.
  keyPerSecond: 2,
  workspacePerSecond: 5,
  testKeyPerMinute: 15,
  testKeyMonthlyRecipients: 60,
  workspaceMonthlyRecipients: 1_000_000,
};
/** Recipients per email of the key that runs into its monthly quota. */
const QUOTA_RECIPIENTS = 6;

interface Sender {
  name: string;
  key: string;
  keyId: string;
  from: string;
  to: (n: number) => string[];
  /** Real-time pause between this lane's sends (the load lanes send back to back). */
  pauseMs: number;
}

interface Tally {
  /** Idempotency-Key -> the email id its 202 named. */
  acked: Map<string, string>;
  refused: Map<string, number>; // sender and error code -> count
  unexpected: string[];
  retries: number;
}

/** POST /v1/emails with a deadline: a relay killed mid-request or a server down must not hang a lane. */
async function post(url: string, key: string, idempotencyKey: string, body: unknown): Promise<{ status: number; body: any }> {
  try {
    const res = await fetch(`${url}/v1/emails`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    return { status: res.status, body: text.startsWith('{') ? JSON.parse(text) : text };
  } catch {
    return { status: 0, body: 'network error' };
  }
}

describe('chaos: three relays under load, each killed -9 and restarted, PostgreSQL restarted', () => {
  let server: PostgresServer;
  let cluster: Cluster;
  let receiver: Receiver;
  before(async () => {
    receiver = await startReceiver();
    // A server of this test's own: its restart must not touch the other tests' databases.
    server = await startPostgresServer();
    cluster = await startCluster({
      relays: 3,
      serverUrl: server.url,
      // Short leases: what a killed relay was dispatching is settled soon after; the test clock
      // brings retries deferred by the outage forward once the load has stopped.
      config: { limits: LIMITS, delivery: { leaseSeconds: 2 } },
      extraArgs: ['--test-clock'],
    });
  });
  after(async () => {
    await cluster?.stop();
    await server?.stop();
    await receiver?.close();
  });

  test('every acknowledged email is there, none delivered twice, the limits hold', async () => {
    const { senders, liveProjectId } = await makeSenders(cluster);
    const hookedEvents = ['email.delivered', 'email.delivery_unknown'];
    const hook = await cluster.admin(0, 'POST', `/admin/v1/projects/${liveProjectId}/webhooks`, { url: receiver.url, events: hookedEvents });
    assert.equal(hook.status, 201, hook.text);
    const tally: Tally = { acked: new Map(), refused: new Map(), unexpected: [], retries: 0 };
    let sending = true;
    let next = 0;

    // One logical send: a fresh key, then the same key and body on the next relay until answered.
    const sendOne = async (sender: Sender): Promise<'acknowledged' | 'refused' | 'unexpected'> => {
      const n = next++;
      const idempotencyKey = `chaos-${sender.name}-${n}`;
      const body = { from: sender.from, to: sender.to(n), subject: idempotencyKey, text: `Chaos ${n}` };
      for (let attempt = 0; ; attempt++) {
        const relay = cluster.relays[(n + attempt) % cluster.relays.length]!;
        const res = await post(relay.httpUrl, sender.key, idempotencyKey, body);
        if (res.status === 202) {
          const earlier = tally.acked.get(idempotencyKey);
          if (earlier !== undefined && earlier !== res.body.id) tally.unexpected.push(`${idempotencyKey}: answered ${earlier}, then ${res.body.id}`);
          tally.acked.set(idempotencyKey, res.body.id);
          return 'acknowledged';
        }
        if (res.status === 429) {
          const what = `${sender.name} ${res.body.error.code}`;
          tally.refused.set(what, (tally.refused.get(what) ?? 0) + 1);
          return 'refused';
        }
        if (res.status !== 0 && res.status !== 503) {
          tally.unexpected.push(`${idempotencyKey}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
          return 'unexpected';
        }
        tally.retries++;
        if (!sending && attempt > 100) {
          tally.unexpected.push(`${idempotencyKey}: still unanswered after ${attempt} tries`);
          return 'unexpected';
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const lane = async (sender: Sender) => {
      while (sending) {
        // Refused: soon again, though not at once (the window frees up within the second).
        const pauseMs = (await sendOne(sender)) === 'refused' ? Math.max(sender.pauseMs, 200) : sender.pauseMs;
        if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
      }
    };
    const [live1, live2, rate, quota] = senders as [Sender, Sender, Sender, Sender];
    const lanes = [live1, live2, live1, live2, rate, quota].map(lane);

    const progress = async (what: string, more = 20) => {
      const target = tally.acked.size + more;
      await waitFor(`${more} more emails acknowledged (${what})`, async () => tally.acked.size >= target, 60_000);
    };
    const started = Date.now();
    const mark = (what: string) =>
      process.stderr.write(`# chaos ${((Date.now() - started) / 1000).toFixed(1)} s: ${what} (${tally.acked.size} acknowledged, ${tally.retries} retries, refused ${JSON.stringify([...tally.refused])})\n`);
    try {
      await progress('load before the chaos', 30);
      for (const i of [0, 1, 2]) {
        mark(`killing relay ${i}`);
        await cluster.relays[i]!.kill9();
        await progress(`relay ${i} killed: the others serve`, 10);
        mark(`restarting relay ${i}`);
        await cluster.restartRelay(i);
        await progress(`relay ${i} restarted`);
        if (i === 0) {
          mark('restarting PostgreSQL');
          await server.restart({ downMs: 1_000 });
          await progress('PostgreSQL restarted');
        }
      }
    } finally {
      sending = false;
      await Promise.all(lanes);
    }
    mark('load stopped');
    assert.deepEqual(tally.unexpected, [], 'only 202, 429, and 503 or a lost connection (retried)');

    // Everything admitted ends: retries deferred by the outage are brought forward on the test clock.
    const acked = [...tally.acked.values()];
    let advancedAt = Date.now();
    await waitFor(
      'every email final',
      async () => {
        const [row] = await cluster.sql<{ n: number }>(
          `SELECT ((SELECT COUNT(*) FROM recipients WHERE status IN ('queued', 'delivery_delayed'))
                + (SELECT COUNT(*) FROM webhook_deliveries WHERE state = 'pending'))::int AS n`,
        );
        if (row!.n === 0) return true;
        if (Date.now() - advancedAt > 1_000) {
          await cluster.admin(0, 'POST', '/admin/v1/clock/advance', { seconds: 600 });
          advancedAt = Date.now();
        }
        return false;
      },
      60_000,
    ).catch(async (error: Error) => {
      const pending = await cluster.sql("SELECT state, attempts, next_attempt_at, lease_expires_at FROM webhook_deliveries WHERE state = 'pending' LIMIT 3");
      const waiting = await cluster.sql("SELECT email_id, status, updated_at FROM recipients WHERE status IN ('queued', 'delivery_delayed') LIMIT 3");
      throw new Error(`${error.message}: ${JSON.stringify({ pending, waiting })}`);
    });
    mark('every email final');
    // Every acknowledged email is there, once per Idempotency-Key.
    const emails = await cluster.sql<{ id: string; subject: string; key_id: string; workspace_id: string; status: string; created_at: string; recipients: number }>(
      'SELECT e.id, e.subject, e.key_id, e.workspace_id, e.status, e.created_at, (SELECT COUNT(*)::int FROM recipients r WHERE r.email_id = e.id) AS recipients FROM emails e',
    );
    const byId = new Map(emails.map((e) => [e.id, e]));
    const lost = acked.filter((id) => !byId.has(id));
    assert.deepEqual(lost, [], `acknowledged emails missing (${lost.length} of ${acked.length})`);
    for (const [idempotencyKey, id] of tally.acked) assert.equal(byId.get(id)!.subject, idempotencyKey);
    const perKey = new Map<string, number>();
    for (const e of emails) perKey.set(e.subject, (perKey.get(e.subject) ?? 0) + 1);
    assert.deepEqual([...perKey].filter(([, n]) => n > 1), [], 'one email per Idempotency-Key');

    // No recipient delivered twice; delivered means captured exactly once.
    const recipients = await cluster.sql<{ email_id: string; address_lc: string; status: string }>('SELECT email_id, address_lc, status FROM recipients');
    const captured = await cluster.sql<{ email_id: string; address_lc: string; n: number }>(
      `SELECT m.email_id, r.address_lc, COUNT(*)::int AS n FROM captured_messages m JOIN captured_recipients r ON r.message_id = m.id
        WHERE m.email_id IS NOT NULL GROUP BY m.email_id, r.address_lc`,
    );
    const copies = new Map(captured.map((c) => [`${c.email_id} ${c.address_lc}`, c.n]));
    const wrong: string[] = [];
    for (const r of recipients) {
      const n = copies.get(`${r.email_id} ${r.address_lc}`) ?? 0;
      if (r.status === 'delivered' ? n !== 1 : r.status === 'delivery_unknown' ? n > 1 : true) wrong.push(`${r.email_id} ${r.address_lc}: ${r.status}, captured ${n} times`);
    }
    assert.deepEqual(wrong, [], 'each recipient delivered (captured once) or delivery_unknown (at most once)');
    const statuses = emails.reduce<Record<string, number>>((acc, e) => ({ ...acc, [e.status]: (acc[e.status] ?? 0) + 1 }), {});
    assert.ok((statuses.delivered ?? 0) > acked.length / 2, `most emails delivered: ${JSON.stringify(statuses)}`);

    // Every webhook event reached the endpoint, the same bytes whenever it came again.
    const hooked = await cluster.sql<{ id: string }>('SELECT id FROM events WHERE project_id = $1 AND type = ANY($2)', [liveProjectId, hookedEvents]);
    const bodies = new Map<string, string>();
    const changed: string[] = [];
    for (const request of receiver.requests) {
      const id = String(request.headers['service-event-id']);
      const body = request.raw.toString('utf8');
      if ((bodies.get(id) ?? body) !== body) changed.push(id);
      bodies.set(id, body);
    }
    assert.ok(hooked.length > 0);
    assert.deepEqual(hooked.filter((e) => !bodies.has(e.id)), [], 'every event at the webhook endpoint');
    assert.deepEqual(changed, [], 'an event sent again carries the same body');
    const [failed] = await cluster.sql<{ n: number }>("SELECT COUNT(*)::int AS n FROM webhook_deliveries WHERE state <> 'delivered'");
    assert.equal(failed!.n, 0, 'every webhook delivery delivered');

    // The limits: never exceeded (the admission times the relays recorded, acknowledged or not),
    // and each reached, or the test would prove nothing.
    const fullest = (filter: (e: (typeof emails)[number]) => boolean, windowMs: number) =>
      fullestWindow(emails.filter(filter).map((e) => Date.parse(e.created_at)), windowMs);
    const windows = [
      { what: 'live1 a second', fullest: fullest((e) => e.key_id === live1.keyId, 1_000), limit: LIMITS.keyPerSecond },
      { what: 'live2 a second', fullest: fullest((e) => e.key_id === live2.keyId, 1_000), limit: LIMITS.keyPerSecond },
      { what: 'the workspace a second', fullest: fullest((e) => e.workspace_id === cluster.workspaceId, 1_000), limit: LIMITS.workspacePerSecond },
      { what: 'the development key a minute', fullest: fullest((e) => e.key_id === rate.keyId, 60_000), limit: LIMITS.testKeyPerMinute },
      { what: 'the quota key a minute', fullest: fullest((e) => e.key_id === quota.keyId, 60_000), limit: LIMITS.testKeyPerMinute },
    ];
    assert.deepEqual(windows.filter((w) => w.fullest > w.limit), [], 'no rate window exceeded');
    assert.deepEqual(windows.slice(0, 4).filter((w) => w.fullest < w.limit), [], 'every rate window reached');
    const quotaRecipients = emails.filter((e) => e.key_id === quota.keyId).reduce((sum, e) => sum + e.recipients, 0);
    assert.ok(quotaRecipients <= LIMITS.testKeyMonthlyRecipients, `${quotaRecipients} recipients within the monthly ${LIMITS.testKeyMonthlyRecipients}`);
    assert.ok(quotaRecipients + QUOTA_RECIPIENTS > LIMITS.testKeyMonthlyRecipients && tally.refused.has('quota quota_exceeded'), 'the monthly quota reached');
    // What a killed relay, or the server's restart, caught between a batch's counters and its
    // COMMIT is given back by the others' recovery once its reservation is 15 s old.
    await waitFor(
      'every abandoned charge given back',
      async () => (await cluster.sql<{ n: number }>('SELECT COUNT(*)::int AS n FROM counter_reservations'))[0]!.n === 0,
      30_000,
    );
    const usage = await cluster.sql<{ scope: string; used: number }>('SELECT scope, used::int AS used FROM usage_counters');
    const used = new Map(usage.map((u) => [u.scope, u.used]));
    const sumOf = (filter: (e: (typeof emails)[number]) => boolean) => emails.filter(filter).reduce((sum, e) => sum + e.recipients, 0);
    assert.equal(used.get(`key:${quota.keyId}`), quotaRecipients, 'the quota key is charged exactly its admitted recipients');
    assert.equal(used.get(`ws:${cluster.workspaceId}`), sumOf(() => true), 'the workspace is charged exactly its admitted recipients');
  });
});

/** Two production keys (the per-second windows), two development keys (the per-minute window, the monthly quota). */
async function makeSenders(cluster: Cluster): Promise<{ senders: Sender[]; liveProjectId: string }> {
  const ok = async (res: Promise<{ status: number; body: any; text: string }>) => {
    const r = await res;
    assert.ok(r.status === 200 || r.status === 201, r.text);
    return r.body;
  };
  await ok(cluster.admin(0, 'POST', `/admin/v1/workspaces/${cluster.workspaceId}/activate`));
  const project = await ok(cluster.admin(0, 'POST', `/admin/v1/workspaces/${cluster.workspaceId}/projects`, { name: 'chaos live', environment: 'production' }));
  const domain = await ok(cluster.admin(0, 'POST', `/admin/v1/projects/${project.id}/domains`, { name: 'live.chaos.test' }));
  await ok(cluster.admin(0, 'POST', `/admin/v1/domains/${domain.id}/verify`, { force: true }));
  const key = (projectId: string, name: string) => ok(cluster.admin(0, 'POST', `/admin/v1/projects/${projectId}/keys`, { name, permission: 'email:send' }));
  const [l1, l2, t2] = [await key(project.id, 'live 1'), await key(project.id, 'live 2'), await key(cluster.projectId, 'quota')];
  const [bootKey] = await cluster.sql<{ id: string }>('SELECT id FROM api_keys WHERE project_id = $1 ORDER BY created_at LIMIT 1', [cluster.projectId]);
  const live = (name: string, k: { key: string; id: string }): Sender => ({
    name,
    key: k.key,
    keyId: k.id,
    from: 'Chaos <sender@live.chaos.test>',
    to: (n) => [`reader-${n}@inbox.chaos.test`],
    pauseMs: 0,
  });
  const senders: Sender[] = [
    live('live1', l1),
    live('live2', l2),
    { name: 'rate', key: cluster.apiKey, keyId: bootKey!.id, from: `sender@${cluster.domain}`, to: (n) => [`rate-${n}@${cluster.domain}`], pauseMs: 500 },
    {
      name: 'quota',
      key: t2.key,
      keyId: t2.id,
      from: `sender@${cluster.domain}`,
      to: (n) => Array.from({ length: QUOTA_RECIPIENTS }, (_, i) => `quota-${n}-${i}@${cluster.domain}`),
      pauseMs: 1_000,
    },
  ];
  return { senders, liveProjectId: project.id };
}
