// The delivery parts composed directly, without the HTTP layer: a temporary SQLite database, the
// SMTP sink on an ephemeral port, the sink provider and the worker, on an adjustable clock.
// Emails are inserted the way admission stores them (email row, recipients, a ready job).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { RelayBus } from '../../relay/bus.js';
import { Clock } from '../../relay/clock.js';
import { defaultConfig } from '../../relay/config.js';
import { createSinkProvider } from '../../relay/delivery/sink.js';
import type { DeliveryProvider } from '../../relay/delivery/provider.js';
import { KeyCache } from '../../relay/domain/auth.js';
import { KeyUse } from '../../relay/domain/key-use.js';
import { RateLimiter } from '../../relay/domain/rate-limits.js';
import { bootstrapIfEmpty } from '../../relay/domain/first-run.js';
import { newId } from '../../relay/ids.js';
import { createLogger } from '../../relay/log.js';
import { Metrics } from '../../relay/metrics.js';
import { startWorker, type Worker } from '../../relay/queue/worker.js';
import { SecretBox } from '../../relay/secrets.js';
import type { RelayServices } from '../../relay/services.js';
import { startSmtpSink, type SmtpSink, type SmtpSinkOptions } from '../../relay/smtp/sink-server.js';
import { openStorage } from '../../relay/storage/open.js';
import { TEST_BACKEND, freshPostgresDatabase, seedSqliteDataDir } from './backend.js';
import { startCheckSummaries } from '../../relay/inbox/checks/summaries.js';
import { CaptureActivity } from '../../relay/inbox/capture-activity.js';
import { MessageWaits } from '../../relay/inbox/message-waits.js';
import { AuthFailures } from '../../relay/auth-failures.js';
import { DashboardSessions } from '../../relay/dashboard/sessions.js';
import { threadBootMs } from './threads-booted.js';
import { testDkimKeyPair } from './dkim-keys.js';

export interface NewTestEmail {
  from?: string;
  to?: string[];
  cc?: string[];
  bcc?: string[];
  subject?: string;
  text?: string | null;
  html?: string | null;
  replyTo?: string;
  headers?: Record<string, string>;
  /** The state of its job: ready (default) or running (a dispatch a dead process had begun). */
  jobState?: 'ready' | 'running';
}

export interface Harness {
  services: RelayServices;
  clock: Clock;
  sink: SmtpSink;
  provider: DeliveryProvider;
  worker?: Worker;
  domain: string;
  dataDir: string;
  startWorker(): Worker;
  insertEmail(email?: NewTestEmail): Promise<string>;
  email(id: string): Promise<Record<string, any>>;
  recipients(id: string): Promise<Array<{ address: string; type: string; status: string; attempts: number }>>;
  events(id: string): Promise<Array<{ type: string; recipient: string | null; payload: Record<string, unknown> }>>;
  job(id: string): Promise<{ state: string; attempts: number; run_at: string }>;
  captured(emailId?: string): Promise<Array<{ id: string; envelope_to_json: string; raw: Buffer }>>;
  waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs?: number): Promise<T>;
  /** Waits until the email has no recipient queued or delivery_delayed. */
  waitForTerminal(id: string, timeoutMs?: number): Promise<Record<string, any>>;
  /**
   * Queues an email now and waits until it is delivered. The worker claims due jobs oldest run_at
   * first, so by then every job due at this moment has been claimed: what a test expects not to
   * be dispatched by now was not, with no sleep to guess how long that takes.
   */
  passBarrier(): Promise<void>;
  stop(): Promise<void>;
}

export async function startHarness(
  options: { sink?: SmtpSinkOptions; target?: { host: string; port: number }; worker?: boolean; concurrency?: number } = {},
): Promise<Harness> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'raven-delivery-'));
  const config = defaultConfig();
  config.dataDir = dataDir;
  const database = TEST_BACKEND === 'postgres' ? await freshPostgresDatabase() : undefined;
  if (!database) await seedSqliteDataDir(dataDir);
  config.database = database?.url;
  const db = await openStorage(config, createLogger('error'));
  config.smtpPort = 0;
  config.logLevel = 'error';
  if (options.concurrency) config.delivery.concurrency = options.concurrency;
  const clock = new Clock(0, true);
  const bus = new RelayBus();
  const services: RelayServices = {
    dkimKeyPair: testDkimKeyPair,
    db,
    clock,
    config,
    log: createLogger(process.env.RAVEN_TEST_LOG ? 'debug' : 'error'),
    secrets: new SecretBox('delivery-harness-secret-key-0123456789'),
    bus,
    rateLimiter: new RateLimiter(config.limits),
    keys: new KeyCache(),
    keyUse: new KeyUse(db, clock, createLogger('error')),
    metrics: new Metrics(),
    adminToken: 'harness-admin-token',
    sessions: new DashboardSessions(db, 'harness-admin-token'),
    messageWaits: new MessageWaits({ db, bus, log: createLogger('error') }),
    checkSummaries: startCheckSummaries(() => services),
    captureActivity: new CaptureActivity(),
    adminTokenFailures: new AuthFailures(() => clock.nowMs()),
    health: { database: true, http: false, smtp: false, worker: false },
  };
  const boot = (await bootstrapIfEmpty(services))!;
  const sink = await startSmtpSink(services, options.sink);
  const provider = createSinkProvider(options.target ?? { host: sink.host, port: sink.port }, services);

  const h: Harness = {
    services,
    clock,
    sink,
    provider,
    domain: boot.domain,
    dataDir,
    startWorker() {
      h.worker = startWorker(services, provider);
      return h.worker;
    },
    async insertEmail(e = {}) {
      const now = clock.iso();
      const id = newId('em', clock.nowMs());
      const to = e.to ?? [`user@${boot.domain}`];
      const cc = e.cc ?? [];
      const bcc = e.bcc ?? [];
      const bare = (a: string) => /<([^>]+)>/.exec(a)?.[1] ?? a;
      const recipients = [
        ...to.map((a) => ({ address: bare(a), type: 'to' })),
        ...cc.map((a) => ({ address: bare(a), type: 'cc' })),
        ...bcc.map((a) => ({ address: bare(a), type: 'bcc' })),
      ];
      await db.write(async (tx) => {
        await tx.run(
          `INSERT INTO emails (id, project_id, workspace_id, key_id, status, from_address, to_json, cc_json, bcc_json, reply_to, subject,
             text_body, html_body, headers_json, tags_json, metadata_json, test_mode, created_at, updated_at)
           VALUES (?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?, ?, '{}', '{}', 1, ?, ?)`,
          [
            id,
            boot.projectId,
            boot.workspaceId,
            boot.keyId,
            e.from ?? `Raven Test <sender@${boot.domain}>`,
            JSON.stringify(to),
            JSON.stringify(cc),
            JSON.stringify(bcc),
            e.replyTo ?? null,
            e.subject ?? 'Hello',
            e.text === undefined ? 'Hi there' : e.text,
            e.html ?? null,
            JSON.stringify(e.headers ?? {}),
            now,
            now,
          ],
        );
        for (const [i, r] of recipients.entries()) {
          await tx.run(
            "INSERT INTO recipients (email_id, position, address, address_lc, type, status, updated_at) VALUES (?, ?, ?, ?, ?, 'queued', ?)",
            [id, i, r.address, r.address.toLowerCase(), r.type, now],
          );
        }
        await tx.run('INSERT INTO jobs (email_id, state, run_at, attempts, created_at, updated_at) VALUES (?, ?, ?, 0, ?, ?)', [
          id,
          e.jobState ?? 'ready',
          now,
          now,
          now,
        ]);
      });
      bus.emit('jobs.ready');
      return id;
    },
    async email(id) {
      return (await db.get<Record<string, any>>('SELECT * FROM emails WHERE id = ?', [id]))!;
    },
    recipients: (id) =>
      db.all('SELECT address, type, status, attempts FROM recipients WHERE email_id = ? ORDER BY position', [id]),
    async events(id) {
      const rows = await db.all<{ type: string; recipient: string | null; payload_json: string }>(
        'SELECT type, recipient, payload_json FROM events WHERE email_id = ? ORDER BY seq',
        [id],
      );
      return rows.map((r) => ({ type: r.type, recipient: r.recipient, payload: JSON.parse(r.payload_json) }));
    },
    async job(id) {
      return (await db.get<{ state: string; attempts: number; run_at: string }>('SELECT state, attempts, run_at FROM jobs WHERE email_id = ?', [id]))!;
    },
    captured: (emailId) =>
      emailId === undefined
        ? db.all('SELECT id, envelope_to_json, raw FROM captured_messages ORDER BY seq')
        : db.all('SELECT id, envelope_to_json, raw FROM captured_messages WHERE email_id = ? ORDER BY seq', [emailId]),
    async waitFor(what, probe, timeoutMs = 10_000) {
      let deadline = Date.now() + timeoutMs;
      for (;;) {
        const value = await probe();
        if (value !== undefined && value !== false) return value as never;
        deadline += await threadBootMs();
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async waitForTerminal(id, timeoutMs) {
      return h.waitFor(
        `email ${id} to be terminal`,
        async () => {
          const row = await h.email(id);
          return row.terminal_at ? row : undefined;
        },
        timeoutMs,
      );
    },
    async passBarrier() {
      const barrier = await h.waitForTerminal(await h.insertEmail({ to: [`barrier@${boot.domain}`] }));
      if (barrier.status !== 'delivered') throw new Error(`the barrier email ended ${barrier.status}`);
    },
    async stop() {
      await h.worker?.stop();
      await provider.close();
      await sink.close();
      await db.close();
      await database?.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  if (options.worker !== false) h.startWorker();
  return h;
}
