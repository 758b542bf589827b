// The inbox in tests and tools (CONTRACT section 10): captured mail carries its project, the list
// and the inbox filter by it, and GET /admin/v1/messages/wait answers at once, when woken by a
// later capture, or 408 wait_timeout; a client that goes away frees its wait.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import nodemailer from 'nodemailer';
import { RavenAdmin, WaitTimeoutError } from 'raven-email-sdk';
import { call, createProjectWithKey, startTestRelay, type TestRelay } from '../helpers/start-relay.js';

// The relay runs in this process: its live heap is this heap, measured after a full collection.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

describe('per-project inboxes and the wait', () => {
  let t: TestRelay;
  let other: Awaited<ReturnType<typeof createProjectWithKey>>;
  before(async () => {
    t = await startTestRelay();
    other = await createProjectWithKey(t);
  });
  after(() => t.stop());

  const waitFor = (query: string) => t.admin('GET', `/admin/v1/messages/wait?${query}`);

  test('a delivery belongs to its email\'s project; mail sent straight to the sink without AUTH to none', async () => {
    const mine = await t.send({ to: `proj-a@${t.domain}`, subject: 'Project A' });
    const theirs = await t.send({ from: `app@${other.domain}`, to: `proj-b@${other.domain}`, subject: 'Project B' }, { key: other.key });
    assert.equal(mine.status, 202, mine.text);
    assert.equal(theirs.status, 202, theirs.text);
    const a = await waitFor(`to=proj-a@${t.domain}`);
    const b = await waitFor(`to=proj-b@${other.domain}`);
    assert.equal(a.status, 200, a.text);
    assert.equal(a.body.project_id, t.projectId);
    assert.equal(b.body.project_id, other.projectId);

    const transport = nodemailer.createTransport({ host: t.relay.smtpHost, port: t.relay.smtpPort, ignoreTLS: true });
    await transport.sendMail({ from: 'app@elsewhere.test', to: 'nobody-project@elsewhere.test', subject: 'No project', text: 'hi' });
    transport.close();
    const none = await waitFor('to=nobody-project@elsewhere.test');
    assert.equal(none.body.project_id, null);

    const listed = await t.admin('GET', `/admin/v1/messages?project=${other.projectId}`);
    assert.equal(listed.status, 200, listed.text);
    assert.deepEqual(listed.body.messages.map((m: { id: string }) => m.id), [b.body.id]);
    assert.equal(listed.body.messages[0].project_id, other.projectId);
    const everything = await t.admin('GET', '/admin/v1/messages');
    assert.ok(everything.body.messages.some((m: { project_id: string | null }) => m.project_id === null));

    // The inbox follows the project too, once the indexer has the entry.
    for (;;) {
      const inbox = await t.admin('GET', `/admin/v1/inbox?project=${other.projectId}`);
      assert.equal(inbox.status, 200, inbox.text);
      if (inbox.body.messages.length > 0) {
        assert.deepEqual(inbox.body.messages.map((m: { id: string }) => m.id), [b.body.id]);
        assert.equal(inbox.body.messages[0].project_id, other.projectId);
        assert.equal(inbox.body.unread, 1);
        break;
      }
      await delay(20);
    }
  });

  test("a sink client that authenticates with an API key sends its project's mail; a wrong key is 535, another login no project", async () => {
    const send = async (auth: { user: string; pass: string }, to: string) => {
      const transport = nodemailer.createTransport({ host: t.relay.smtpHost, port: t.relay.smtpPort, ignoreTLS: true, auth });
      try {
        return await transport.sendMail({ from: 'app@elsewhere.test', to, subject: 'Over SMTP', text: 'hi' });
      } finally {
        transport.close();
      }
    };
    await send({ user: 'raven', pass: other.key }, 'keyed@elsewhere.test');
    const keyed = await waitFor('to=keyed@elsewhere.test');
    assert.equal(keyed.body.project_id, other.projectId);
    await send({ user: 'someone', pass: 'a password of its own' }, 'own-login@elsewhere.test');
    assert.equal((await waitFor('to=own-login@elsewhere.test')).body.project_id, null);
    await assert.rejects(send({ user: 'raven', pass: 'rr_test_not_a_real_key' }, 'refused@elsewhere.test'), (error: { response?: string }) => {
      assert.match(String(error.response), /^535 5\.7\.8 /);
      return true;
    });
  });

  test('an unknown project, a malformed timeout, an unknown after or a filter no message can match is a validation_error', async () => {
    const noMatch = ['to=a%00b@x.test', `to=${'a'.repeat(250)}@x.test`, 'subject=ab%00cd', `subject=${'s'.repeat(999)}`];
    for (const query of ['project=prj_nope', 'timeout=0', 'timeout=121', 'timeout=abc', 'after=msg_nope', 'to=', 'to=a@x.test&to=b@x.test', ...noMatch]) {
      const res = await waitFor(query);
      assert.equal(res.status, 422, `${query}: ${res.text}`);
      assert.equal(res.body.error.code, 'validation_error');
    }
    for (const path of ['/admin/v1/messages?project=prj_nope', '/admin/v1/inbox?project=prj_nope']) {
      const res = await t.admin('GET', path);
      assert.equal(res.status, 422, res.text);
    }
  });

  test('answers at once with the newest match; subject is a case-insensitive substring', async () => {
    const to = `at-once@${t.domain}`;
    for (const subject of ['Welcome aboard', 'Your sign-in CODE']) {
      const sent = await t.send({ to, subject });
      await t.waitForFinal(sent.body.id);
    }
    const newest = await waitFor(`to=${to.toUpperCase()}&timeout=1`);
    assert.equal(newest.status, 200, newest.text);
    assert.equal(newest.body.subject, 'Your sign-in CODE');
    const bySubject = await waitFor(`to=${to}&subject=welcome&timeout=1`);
    assert.equal(bySubject.body.subject, 'Welcome aboard');
  });

  test('a wait is woken by a later delivery; after= skips what came before', async () => {
    const to = `later@${t.domain}`;
    const first = await t.send({ to, subject: 'First' });
    await t.waitForFinal(first.body.id);
    const firstMessage = await waitFor(`to=${to}`);
    const waiting = waitFor(`to=${to}&after=${firstMessage.body.id}&timeout=60`);
    // Sent once the wait is open (its waiter registered), so only a wake-up can answer it.
    while (t.relay.services.messageWaits.size === 0) await delay(10);
    await t.send({ to, subject: 'Second', html: '<p>Confirm: <a href="https://app.test/confirm?t=1&amp;u=2">Confirm your address</a></p>' });
    const woken = await waiting;
    assert.equal(woken.status, 200, woken.text);
    assert.equal(woken.body.subject, 'Second');
    assert.deepEqual(woken.body.links, [{ url: 'https://app.test/confirm?t=1&u=2', text: 'Confirm your address' }]);
  });

  test('no match in time -> 408 wait_timeout', async () => {
    const res = await waitFor(`to=never@${t.domain}&timeout=1`);
    assert.equal(res.status, 408, res.text);
    assert.equal(res.body.error.code, 'wait_timeout');
    assert.equal(t.relay.services.messageWaits.size, 0);
  });

  test("the admin SDK's messages.wait: the message, or WaitTimeoutError (not retried)", async () => {
    const admin = new RavenAdmin({ adminToken: t.adminToken, baseUrl: t.url });
    try {
      const to = `sdk-wait@${t.domain}`;
      await t.send({ to, subject: 'From the SDK', text: 'Your one-time code: 771204' });
      const message = await admin.messages.wait({ to, timeout: 30 });
      assert.equal(message.subject, 'From the SDK');
      assert.deepEqual(message.codes, ['771204']);
      await assert.rejects(admin.messages.wait({ to: `nobody@${t.domain}`, timeout: 1 }), (error: unknown) => {
        assert.ok(error instanceof WaitTimeoutError);
        assert.equal(error.status, 408);
        assert.equal(error.code, 'wait_timeout');
        return true;
      });
    } finally {
      await admin.close();
    }
  });

  test('200 concurrent waits woken by 200 messages: each gets its own', async () => {
    const n = 200;
    const addresses = Array.from({ length: n }, (_, i) => `many-${i}@${t.domain}`);
    const before = t.relay.services.messageWaits.size;
    const waits = addresses.map((to) => call(t.directUrl, 'GET', `/admin/v1/messages/wait?to=${to}&timeout=120`, { token: t.adminToken }));
    while (t.relay.services.messageWaits.size < before + n) await delay(20);
    for (let i = 0; i < n; i += 20) {
      const batch = addresses.slice(i, i + 20).map((to) => t.send({ to, subject: `For ${to}` }));
      for (const sent of await Promise.all(batch)) assert.equal(sent.status, 202, sent.text);
    }
    const answers = await Promise.all(waits);
    answers.forEach((res, i) => {
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.to, [addresses[i]]);
      assert.equal(res.body.subject, `For ${addresses[i]}`);
    });
  });

  test('10,000 abandoned waits are freed and do not grow the relay\'s memory', async () => {
    const url = new URL(t.directUrl);
    const agent = new http.Agent({ keepAlive: false, maxSockets: 250 });
    const abandonBatch = async (size: number) => {
      const requests = Array.from({ length: size }, () => {
        const req = http.get({ host: url.hostname, port: url.port, agent, path: `/admin/v1/messages/wait?to=abandoned@${t.domain}&timeout=120`, headers: { authorization: `Bearer ${t.adminToken}` } });
        req.on('error', () => undefined);
        return req;
      });
      while (t.relay.services.messageWaits.size < size) await delay(10);
      for (const req of requests) req.destroy();
      while (t.relay.services.messageWaits.size > 0) await delay(10);
    };
    const liveHeap = async () => {
      await delay(50); // sockets finish closing
      gc();
      gc();
      return process.memoryUsage().heapUsed;
    };
    await abandonBatch(250); // warm up
    const heapBefore = await liveHeap();
    for (let i = 0; i < 40; i++) await abandonBatch(250);
    const grown = (await liveHeap()) - heapBefore;
    agent.destroy();
    assert.equal(t.relay.services.messageWaits.size, 0);
    // A leak of 10,000 waits (each holding a request, a socket and a timer) is far above this.
    assert.ok(grown < 16 * 1024 * 1024, `heap grew by ${Math.round(grown / 1024 / 1024)} MB`);
  });
});
