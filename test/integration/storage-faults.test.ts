// Storage faults during admission: the database locked by another process past busy_timeout, the
// database full (SQLite's max_page_count on the relay's own writer connection), and writes the
// operating system refuses (RLIMIT_FSIZE on the relay process: every write fails with EFBIG).
// While the fault lasts each POST /v1/emails answers 202 or 503 service_unavailable with
// Retry-After, never a 500, and never a 202 without a commit. Once it clears the relay answers 202
// again, and then, read straight from the SQLite file and through the API: every 202 exists with
// all its rows (recipients, the email.queued event, the job, the idempotency record, the quota
// charge), nothing of a 503 exists (its Idempotency-Key is free again), and the file is intact.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { errorReply } from '../../relay/http/error-reply.js';
import { isStorageFault, openDatabase } from '../../relay/storage/db.js';
import { startContractProxy } from '../helpers/contract.js';
import { startRelayProcess, type RelayProcess } from '../helpers/relay-process.js';
import { call, startTestRelay, type CallResult } from '../helpers/start-relay.js';
import { integrityCheck, openInspector, type Inspector } from '../helpers/sqlite-inspect.js';

const ADMIN_TOKEN = 'faults-admin-token-0123456789';
/** Requests sent at once, so that several share one group commit. */
const BATCH = 6;
const RECIPIENTS_PER_EMAIL = 3; // to, cc, bcc

/** The relay under test, however it runs; `api` uses the bootstrap key. */
interface Target {
  api(method: string, urlPath: string, body?: unknown, headers?: Record<string, string>): Promise<CallResult>;
  admin(method: string, urlPath: string): Promise<CallResult>;
  domain: string;
  workspaceId: string;
  dbFile: string;
  /** The relay's log so far, when it runs as a process of its own (for failure messages). */
  log?(): string;
}

interface Fault {
  inject(): Promise<void>;
  clear(): Promise<void>;
  /** Body size of the emails sent while the fault lasts (a full database needs big ones). */
  textBytes?: number;
}

interface Attempt {
  idempotencyKey: string;
  body: Record<string, unknown>;
  res?: CallResult;
}

function emailBody(target: Target, label: string, textBytes = 64): Record<string, unknown> {
  return {
    from: `Faults <sender@${target.domain}>`,
    to: `to-${label}@${target.domain}`,
    cc: `cc-${label}@${target.domain}`,
    bcc: `bcc-${label}@${target.domain}`,
    subject: `fault ${label}`,
    text: `body of ${label} `.padEnd(textBytes, 'x'),
  };
}

/** Sends `BATCH` emails at once; each attempt records its response when it comes. */
function sendBatch(target: Target, label: string, textBytes?: number): { attempts: Attempt[]; done: Promise<void> } {
  const attempts: Attempt[] = Array.from({ length: BATCH }, (_, i) => ({
    idempotencyKey: `idem-${label}-${i}`,
    body: emailBody(target, `${label}-${i}`, textBytes),
  }));
  const done = Promise.all(
    attempts.map(async (a) => {
      a.res = await target.api('POST', '/v1/emails', a.body, { 'idempotency-key': a.idempotencyKey });
    }),
  ).then(() => undefined);
  return { attempts, done };
}

/** Resolves once some response is a 503 (true) or the batch is over without one (false). */
async function first503(batch: { attempts: Attempt[]; done: Promise<void> }): Promise<boolean> {
  let over = false;
  void batch.done.then(() => (over = true));
  for (;;) {
    if (batch.attempts.some((a) => a.res?.status === 503)) return true;
    if (over) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
}

const accepted = (attempts: Attempt[]) => attempts.filter((a) => a.res!.status === 202);
const refused = (attempts: Attempt[]) => attempts.filter((a) => a.res!.status === 503);

function assertEveryAnswerIs202Or503(attempts: Attempt[]): void {
  const other = attempts.filter((a) => a.res!.status !== 202 && a.res!.status !== 503);
  assert.deepEqual(
    other.map((a) => `${a.res!.status} ${a.res!.text}`),
    [],
    'a storage fault answers 503 service_unavailable, never a 500 or another code',
  );
  for (const a of refused(attempts)) {
    const res = a.res!;
    assert.equal(res.body.error.code, 'service_unavailable', res.text);
    const retryAfter = Number(res.headers.get('retry-after'));
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1, `Retry-After is whole seconds >= 1: ${res.headers.get('retry-after')}`);
    assert.equal(res.body.error.retry_after, retryAfter, 'retry_after equals the Retry-After header');
    assert.match(res.body.error.message, new RegExp(`${retryAfter} second`), 'the message states the seconds to wait');
  }
}

interface EmailRows {
  id: string;
  subject: string;
  recipients: number;
  queued_events: number;
  jobs: number;
  idempotency_keys: number;
}

/**
 * What the file holds, checked against what the clients were told: exactly the acknowledged
 * emails exist, each whole; no row of a refused one, no orphan row, the quota charged for exactly
 * the committed recipients.
 */
async function assertCommittedExactlyWhatWasAcknowledged(target: Target, attempts: Attempt[]): Promise<void> {
  const db = await openInspector(target.dbFile);
  try {
    const rows = await db.all<EmailRows>(
      `SELECT e.id, e.subject,
              (SELECT COUNT(*) FROM recipients r WHERE r.email_id = e.id) AS recipients,
              (SELECT COUNT(*) FROM events v WHERE v.email_id = e.id AND v.type = 'email.queued') AS queued_events,
              (SELECT COUNT(*) FROM jobs j WHERE j.email_id = e.id) AS jobs,
              (SELECT COUNT(*) FROM idempotency_keys k WHERE k.email_id = e.id) AS idempotency_keys
         FROM emails e`,
    );
    const ok = accepted(attempts);
    assert.deepEqual(
      rows.map((r) => r.id).sort(),
      ok.map((a) => a.res!.body.id as string).sort(),
      'the emails in the database are exactly those answered 202',
    );
    const bySubject = new Map(rows.map((r) => [r.subject, r]));
    for (const a of ok) {
      assert.deepEqual(
        bySubject.get(a.body.subject as string),
        { id: a.res!.body.id, subject: a.body.subject, recipients: RECIPIENTS_PER_EMAIL, queued_events: 1, jobs: 1, idempotency_keys: 1 },
        `every row of the accepted email ${a.body.subject as string}`,
      );
    }
    const refusedKeys = refused(attempts).map((a) => a.idempotencyKey);
    if (refusedKeys.length > 0) {
      const kept = await db.all(`SELECT key FROM idempotency_keys WHERE key IN (${refusedKeys.map(() => '?').join(',')})`, refusedKeys);
      assert.deepEqual(kept, [], 'no idempotency record of a refused request');
    }
    const orphans = await db.all<{ n: number }>(
      `SELECT (SELECT COUNT(*) FROM recipients WHERE email_id NOT IN (SELECT id FROM emails))
            + (SELECT COUNT(*) FROM events WHERE email_id NOT IN (SELECT id FROM emails))
            + (SELECT COUNT(*) FROM jobs WHERE email_id NOT IN (SELECT id FROM emails))
            + (SELECT COUNT(*) FROM idempotency_keys WHERE email_id NOT IN (SELECT id FROM emails)) AS n`,
    );
    assert.equal(orphans[0]!.n, 0, 'no row belongs to an email that does not exist');
  } finally {
    await db.close();
  }

  const usage = await target.admin('GET', `/admin/v1/workspaces/${target.workspaceId}/usage`);
  assert.equal(usage.status, 200, usage.text);
  assert.equal(usage.body.workspace.used, accepted(attempts).length * RECIPIENTS_PER_EMAIL, 'the quota is charged for committed emails only');
}

/** The same, through the API: every 202 reads back whole; the list holds nothing else. */
async function assertApiShowsExactlyWhatWasAcknowledged(target: Target, attempts: Attempt[]): Promise<void> {
  for (const a of accepted(attempts)) {
    const res = await target.api('GET', `/v1/emails/${a.res!.body.id}`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.subject, a.body.subject);
    assert.deepEqual(res.body.recipients.map((r: { type: string }) => r.type).sort(), ['cc', 'to'], 'To and CC listed (BCC never)');
    assert.ok(res.body.events.some((e: { type: string }) => e.type === 'email.queued'), `${res.text} has its email.queued event`);
  }
  const listed = await target.api('GET', '/v1/emails?limit=100');
  assert.equal(listed.status, 200, listed.text);
  assert.equal(listed.body.next_cursor, null, 'fewer than 100 emails in these tests');
  assert.deepEqual(
    listed.body.emails.map((e: { id: string }) => e.id).sort(),
    accepted(attempts).map((a) => a.res!.body.id as string).sort(),
  );
}

/** Baseline, fault, recovery, then every check; the same for each kind of fault. */
async function exerciseFault(t: TestContext, target: Target, fault: Fault, name: string): Promise<void> {
  const all: Attempt[] = [];
  const before = sendBatch(target, `${name}-before`);
  await before.done;
  all.push(...before.attempts);
  assert.equal(accepted(before.attempts).length, BATCH, `the relay accepts mail before the fault: ${before.attempts.map((a) => a.res!.text)}`);

  await fault.inject();
  let cleared = false;
  try {
    // Batches until the fault shows; then it clears, even while requests are still waiting on it.
    for (let round = 0; ; round++) {
      assert.ok(round < 10, `no request was refused in ${round} batches: the fault never reached admission`);
      const during = sendBatch(target, `${name}-during${round}`, fault.textBytes);
      all.push(...during.attempts);
      const seen = await first503(during);
      if (!seen) continue;
      await fault.clear();
      cleared = true;
      await during.done;
      break;
    }
  } finally {
    if (!cleared) await fault.clear();
  }
  assertEveryAnswerIs202Or503(all);
  const refusedCount = refused(all).length;
  t.diagnostic(`${name}: ${accepted(all).length} accepted, ${refusedCount} refused with 503`);

  const after = sendBatch(target, `${name}-after`);
  await after.done;
  all.push(...after.attempts);
  // Seen once in CI (the lock held by another process, session 12): every request after the
  // fault had cleared answered 503 too; the relay's log says what its writer met.
  assert.equal(
    accepted(after.attempts).length,
    BATCH,
    `the relay accepts mail again once the fault clears: ${after.attempts.map((a) => a.res!.text)}\nthe relay's log, last 4,000 characters: ${target.log?.().slice(-4_000) ?? '(in process)'}`,
  );

  await assertCommittedExactlyWhatWasAcknowledged(target, all);
  await assertApiShowsExactlyWhatWasAcknowledged(target, all);

  // A refused request stored nothing, so its Idempotency-Key admits it now; an accepted one replays.
  for (const a of refused(all)) {
    a.res = await target.api('POST', '/v1/emails', a.body, { 'idempotency-key': a.idempotencyKey });
    assert.equal(a.res.status, 202, a.res.text);
    assert.equal(a.res.headers.get('idempotent-replayed'), null, 'a new admission, not the replay of a half-stored one');
  }
  const replay = accepted(before.attempts)[0]!;
  const again = await target.api('POST', '/v1/emails', replay.body, { 'idempotency-key': replay.idempotencyKey });
  assert.equal(again.status, 202, again.text);
  assert.equal(again.body.id, replay.res!.body.id);
  assert.equal(again.headers.get('idempotent-replayed'), 'true');

  await assertCommittedExactlyWhatWasAcknowledged(target, all);
  assert.deepEqual(await integrityCheck(target.dbFile), ['ok'], 'PRAGMA integrity_check');
}

/** Relaxed limits in a config file: these tests send more than 15 emails a minute. */
async function relaxedConfig(dir: string): Promise<string> {
  const file = path.join(dir, 'config.json');
  const big = 1_000_000;
  await writeFile(
    file,
    JSON.stringify({
      limits: { testKeyPerMinute: big, keyPerSecond: big, workspacePerSecond: big, testKeyMonthlyRecipients: big, workspaceMonthlyRecipients: big },
    }),
  );
  return file;
}

/** A relay child process on a fresh data directory, behind the contract proxy. */
async function startChildTarget(t: TestContext): Promise<{ target: Target; relay: RelayProcess }> {
  const work = await mkdtemp(path.join(tmpdir(), 'raven-faults-'));
  const dataDir = path.join(work, 'data');
  const relay = await startRelayProcess({ dataDir, adminToken: ADMIN_TOKEN, config: await relaxedConfig(work) });
  const proxy = await startContractProxy(relay.httpUrl);
  t.after(async () => {
    await proxy.close();
    await relay.stop();
    await rm(work, { recursive: true, force: true });
    assert.deepEqual(proxy.violations, [], 'responses must conform to openapi.yaml');
  });
  const b = relay.ready.bootstrap;
  const target: Target = {
    api: (method, urlPath, body, headers) => call(proxy.url, method, urlPath, { token: b.api_key, body, headers }),
    admin: (method, urlPath) => call(proxy.url, method, urlPath, { token: ADMIN_TOKEN }),
    domain: b.domain,
    workspaceId: b.workspace_id,
    dbFile: path.join(dataDir, 'raven.sqlite'),
    log: () => relay.stderr(),
  };
  return { target, relay };
}

test('database locked by another process past busy_timeout: 503 with Retry-After, then 202 again, nothing half-stored', { timeout: 120_000 }, async (t) => {
  const { target } = await startChildTarget(t);
  let holder: Inspector | undefined;
  t.after(() => holder?.close());
  await exerciseFault(t, target, {
    async inject() {
      // In WAL mode BEGIN EXCLUSIVE takes the write lock and keeps readers running: admissions
      // wait busy_timeout for it, then give up.
      holder = await openInspector(target.dbFile);
      await holder.exec('BEGIN EXCLUSIVE');
    },
    async clear() {
      await holder!.exec('ROLLBACK');
    },
  }, 'busy');
});

test('database full (max_page_count on the relay writer): 503 with Retry-After, then 202 again, nothing half-stored', { timeout: 120_000 }, async (t) => {
  const relay = await startTestRelay();
  t.after(() => relay.stop());
  const { db } = relay.relay.services;
  const target: Target = {
    api: (method, urlPath, body, headers) => relay.api(method, urlPath, { body, headers }),
    admin: (method, urlPath) => relay.admin(method, urlPath),
    domain: relay.domain,
    workspaceId: relay.workspaceId,
    dbFile: path.join(relay.dataDir, 'raven.sqlite'),
  };
  // max_page_count belongs to a connection, so it is set through the relay's own writer (the
  // only connection that writes): the file may not grow, as on a full disk.
  const setMaxPageCount = (pages: number | 'page_count') =>
    db.write(async (tx) => {
      const limit = pages === 'page_count' ? (await tx.get<{ page_count: number }>('PRAGMA page_count'))!.page_count : pages;
      await tx.get(`PRAGMA max_page_count = ${limit}`);
    });
  await exerciseFault(t, target, {
    inject: () => setMaxPageCount('page_count'),
    clear: () => setMaxPageCount(0xfffffffe),
    textBytes: 48 * 1024,
  }, 'full');
});

test(
  'every write refused by the operating system (RLIMIT_FSIZE 0 on the relay process): 503, then 202 again, nothing half-stored',
  { timeout: 120_000 },
  async (t) => {
    // prlimit (util-linux, on every Debian machine) sets a running process its limits; without it
    // this test fails rather than skips.
    const { target, relay } = await startChildTarget(t);
    // Node ignores SIGXFSZ, so past the limit write(2) fails with EFBIG and SQLite reports an I/O
    // error; raising the soft limit again needs no privilege (the hard limit stays unlimited).
    const setFileSizeLimit = (soft: string) => execFileSync('prlimit', ['--pid', String(relay.child.pid), `--fsize=${soft}:`]);
    await exerciseFault(t, target, {
      inject: async () => void setFileSizeLimit('0'),
      clear: async () => void setFileSizeLimit('unlimited'),
    }, 'ioerr');
  },
);

test('group commit on a full file: the write that cannot grow it fails alone, as a storage fault (503); its neighbours commit', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'raven-faults-db-'));
  const db = await openDatabase(path.join(dir, 'group.sqlite'));
  t.after(async () => {
    await db.close();
    await rm(dir, { recursive: true, force: true });
  });
  await db.write(async (tx) => {
    await tx.run('CREATE TABLE small (x TEXT)');
    await tx.run('CREATE TABLE wide (a INTEGER, b TEXT, PRIMARY KEY (a, b))');
    await tx.run("INSERT INTO small VALUES ('seed')");
  });
  await db.write(async (tx) => {
    await tx.get(`PRAGMA max_page_count = ${(await tx.get<{ page_count: number }>('PRAGMA page_count'))!.page_count}`);
  });

  // A write that waits holds the writer, so the next three are queued and commit as one group.
  let entered!: () => void;
  const inside = new Promise<void>((resolve) => (entered = resolve));
  let open!: () => void;
  const gate = db.write(() => {
    entered();
    return new Promise<void>((resolve) => (open = resolve));
  });
  await inside;
  const big = 'y'.repeat(4096);
  const group = [
    db.write((tx) => tx.run("INSERT INTO small VALUES ('first')")),
    // Several rows under a constraint: SQLite undoes only this statement (a statement journal),
    // so the transaction, and the group, go on without it.
    db.write((tx) => tx.run('INSERT INTO wide VALUES (1, ?), (2, ?), (3, ?)', [big, big, big])),
    db.write((tx) => tx.run("INSERT INTO small VALUES ('third')")),
  ];
  open();
  await gate;
  const [first, wide, third] = await Promise.allSettled(group);
  assert.equal(first!.status, 'fulfilled');
  assert.equal(third!.status, 'fulfilled');
  assert.equal(wide!.status, 'rejected');
  const reason = (wide as PromiseRejectedResult).reason as Error & { cause?: { code?: string } };
  assert.ok(isStorageFault(reason), `classified as a storage fault: ${reason}`);
  assert.equal(reason.cause?.code, 'SQLITE_FULL');
  assert.equal(errorReply(reason).status, 503, 'answered 503 service_unavailable, not 500');
  assert.deepEqual(await db.all('SELECT x FROM small ORDER BY rowid'), [{ x: 'seed' }, { x: 'first' }, { x: 'third' }]);
  assert.deepEqual(await db.all('SELECT COUNT(*) AS n FROM wide'), [{ n: 0 }]);

  // A fault a read meets (no writer to wrap it) is answered the same way.
  const readFault = Object.assign(new Error('SQLITE_IOERR: disk I/O error'), { code: 'SQLITE_IOERR' });
  const reply = errorReply(readFault);
  assert.equal(reply.status, 503);
  assert.equal(reply.headers?.['Retry-After'], 1);
  assert.equal(errorReply(Object.assign(new Error('SQLITE_CONSTRAINT: UNIQUE'), { code: 'SQLITE_CONSTRAINT' })).status, 500, 'a bug stays a 500');
});
