// The webhook dispatcher: drains the outbox (webhook_deliveries, written in the transaction of the
// event that caused it) into signed POSTs. A delivery is `pending` until a 2xx answer (delivered)
// or its seventh failed attempt (failed); each attempt is a row in webhook_attempts, and the next
// one is due on the schedule in schedule.ts, measured from the previous attempt on the relay clock.
// Everything lives in the database, so pending deliveries simply carry on after a restart.
import { signWebhook } from 'raven-email-sdk/webhooks';
import type { RelayServices } from '../services.js';
import { retryStorageFaults } from '../storage/retry.js';
import {
  abandonDeliveryAttempt,
  claimDeliveryAttempt,
  dueDeliveries,
  nextDeliveryDueAfter,
  nextLeaseEnd,
  recordAttempt,
  type AttemptRecord,
  type DueDelivery,
} from '../storage/webhooks.js';
import { readAnswerExcerpt } from './answer-excerpt.js';
import { nextAttemptAtMs, WEBHOOK_MAX_ATTEMPTS } from './schedule.js';
import type { GuardedClient } from './guarded-http.js';
import { checkWebhookUrlSyntax, UrlPolicyError } from './url-policy.js';

export const WEBHOOK_USER_AGENT = 'Raven-Webhooks/1';

export interface DispatcherOptions {
  /** Real time an endpoint gets to answer (connect + headers), in ms. */
  timeoutMs?: number;
  /** Deliveries in flight at once. */
  concurrency?: number;
}

/**
 * Defaults for every dispatcher the relay starts. The contract fixes the 10 s answer time; tests
 * that exercise time-outs lower it here (the relay runs in their process) instead of waiting.
 */
export const webhookDispatcherDefaults: Required<DispatcherOptions> = {
  timeoutMs: 10_000,
  concurrency: 8,
};

/** Longest real-time sleep between scans; the bus and the test clock wake the loop earlier. */
const MAX_IDLE_MS = 60_000;
/** How long stop() lets in-flight attempts finish before aborting them (they stay pending). */
const STOP_GRACE_MS = 1_000;
// An attempt's claim outlives its time-out by this much: past it the relay is taken for dead.
const ATTEMPT_LEASE_MARGIN_MS = 10_000;
/** The last try of an outcome write starts this long before the claim runs out at the latest. */
const RECORD_CLAIM_MARGIN_MS = 2_000;

interface AttemptOutcome {
  statusCode: number | null;
  error: string | null;
  delivered: boolean;
  /** Real milliseconds from the request's start until its answer was read or it failed. */
  durationMs: number;
  /** The start of the answer's body (answer-excerpt.ts); null when no answer came. */
  body: { text: string; truncated: boolean } | null;
}

export interface WebhookDispatcher {
  stop(): Promise<void>;
}

export function startWebhookDispatcher(services: RelayServices, options: DispatcherOptions = {}): WebhookDispatcher {
  const timeoutMs = options.timeoutMs ?? webhookDispatcherDefaults.timeoutMs;
  const concurrency = options.concurrency ?? webhookDispatcherDefaults.concurrency;
  const loop = new OutboxLoop(services, concurrency, timeoutMs);
  loop.start();
  return { stop: () => loop.stop() };
}

/** What every attempt of one dispatcher shares. */
interface AttemptContext {
  services: RelayServices;
  /** The HTTP client, made on the first attempt (guarded-http.ts loads undici). */
  client(): Promise<GuardedClient>;
  /** Real time an endpoint gets to answer. */
  timeoutMs: number;
  /** Whether stop() has begun: an attempt it cuts short is not an attempt. */
  stopping(): boolean;
}

interface InFlight {
  promise: Promise<void>;
  abort: AbortController;
  webhookId: string;
}

/**
 * The scan loop: claims due deliveries into free slots, rescans whenever an attempt ends or the
 * bus or the test clock says so, and otherwise sleeps until the next delivery is due.
 */
class OutboxLoop {
  private readonly inFlight = new Map<number, InFlight>();
  private readonly attempts: AttemptContext;
  // One slow endpoint (10 s time-outs) must not take every slot: it gets at most half of them.
  private readonly perEndpoint: number;
  private stopping = false;
  private scanning = false;
  private rescan = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly wake = () => void this.scan();
  private client: ReturnType<AttemptContext['client']> | undefined;

  constructor(
    private readonly services: RelayServices,
    private readonly concurrency: number,
    timeoutMs: number,
  ) {
    const client = async () =>
      (await import('./guarded-http.js')).guardedClient(services.config.allowLocalWebhooks, timeoutMs, {
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        keepAliveTimeout: 4_000,
      });
    this.attempts = { services, client: () => (this.client ??= client()), timeoutMs, stopping: () => this.stopping };
    this.perEndpoint = Math.max(1, Math.floor(concurrency / 2));
  }

  start(): void {
    this.services.bus.on('webhooks.ready', this.wake);
    this.services.clock.on('advanced', this.wake);
    void this.scan();
  }

  private async scan(): Promise<void> {
    if (this.stopping) return;
    if (this.scanning) {
      this.rescan = true;
      return;
    }
    this.scanning = true;
    try {
      // A wake during any part of a pass, the timer's read included, gets another pass: that read
      // may have run before the delivery the wake announces committed (and while attempts are in
      // flight it looks only at future rows), so a wake dropped there left a due delivery waiting
      // for the idle timer or for a hanging endpoint's time-out.
      do {
        this.rescan = false;
        await this.claimAndSend();
        if (!this.rescan) await this.armTimer();
      } while (this.rescan && !this.stopping);
    } catch (error) {
      if (!this.stopping) this.services.log.error('webhook', 'scan failed', { error: (error as Error).message });
      this.armRetryTimer(1_000);
    } finally {
      this.scanning = false;
    }
  }

  private async claimAndSend(): Promise<void> {
    const { inFlight, concurrency, perEndpoint } = this;
    if (concurrency - inFlight.size <= 0) return;
    // The oldest due rows, at most perEndpoint per endpoint (its in-flight ones count among them),
    // so a backlog on one endpoint never hides the due rows of the others.
    const rows = await dueDeliveries(this.services.db, this.services.clock.iso(), perEndpoint, concurrency + inFlight.size);
    const busy = new Map<string, number>();
    for (const f of inFlight.values()) busy.set(f.webhookId, (busy.get(f.webhookId) ?? 0) + 1);
    for (const row of rows) {
      if (this.stopping || inFlight.size >= concurrency) break;
      if (inFlight.has(row.id) || (busy.get(row.webhook_id) ?? 0) >= perEndpoint) continue;
      busy.set(row.webhook_id, (busy.get(row.webhook_id) ?? 0) + 1);
      this.begin(row);
    }
  }

  /** Starts an attempt in a slot; its end frees the slot and rescans. */
  private begin(row: DueDelivery): void {
    const abort = new AbortController();
    const promise = attemptDelivery(this.attempts, row, abort.signal)
      .catch((error: unknown) => {
        if (!this.stopping) this.services.log.error('webhook', 'attempt failed to record', { delivery_id: row.id, error: (error as Error).message });
      })
      .finally(() => {
        this.inFlight.delete(row.id);
        if (!this.stopping) void this.scan();
      });
    this.inFlight.set(row.id, { promise, abort, webhookId: row.webhook_id });
  }

  /**
   * Sleeps until the next pending delivery is due (in real time). While attempts are in flight,
   * due rows left unclaimed are waiting for a slot, and the end of each attempt rescans; so only
   * future rows set the timer then (otherwise a busy endpoint would make this spin). A row under a
   * lease is due again when the lease runs out (real time, and always in the future here): without
   * that wake, a delivery whose relay died mid-attempt waited for the idle timer, a minute more.
   */
  private async armTimer(): Promise<void> {
    if (this.stopping) return;
    const { db, clock } = this.services;
    const [next, leaseEnd] = await Promise.all([nextDeliveryDueAfter(db, this.inFlight.size === 0 ? '' : clock.iso()), nextLeaseEnd(db)]);
    let ms = MAX_IDLE_MS;
    if (next) ms = Math.min(ms, Math.max(0, Date.parse(next) - clock.nowMs()));
    // One millisecond past it: the scan takes a lease that ended before its own now.
    if (leaseEnd) ms = Math.min(ms, Math.max(0, Date.parse(leaseEnd) - Date.now()) + 1);
    this.armRetryTimer(ms);
  }

  private armRetryTimer(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.stopping) return;
    this.timer = setTimeout(this.wake, ms);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.services.bus.off('webhooks.ready', this.wake);
    this.services.clock.off('advanced', this.wake);
    if (this.timer) clearTimeout(this.timer);
    const pending = [...this.inFlight.values()];
    const grace = new Promise<void>((resolve) => setTimeout(resolve, STOP_GRACE_MS).unref());
    await Promise.race([Promise.all(pending.map((p) => p.promise)), grace]);
    for (const p of this.inFlight.values()) p.abort.abort();
    await Promise.all([...this.inFlight.values()].map((p) => p.promise));
    if (this.client) await (await this.client).agent.close().catch(() => undefined);
  }
}

/** One attempt of a due delivery: claim it, send it, record what happened. */
async function attemptDelivery(ctx: AttemptContext, row: DueDelivery, signal: AbortSignal): Promise<void> {
  const { db, clock } = ctx.services;
  const claimEndsMs = await claimAttempt(ctx, row);
  if (claimEndsMs === null) return;
  const number = row.attempts + 1;
  const startedMs = clock.nowMs();
  const outcome = await postDelivery(ctx, row, signal);
  if (signal.aborted && ctx.stopping()) {
    // Shutdown cut it short: not an attempt, retried after restart (or at once by another relay).
    await abandonDeliveryAttempt(db, row.id);
    return;
  }
  await recordWhileClaimed(ctx, row, number, startedMs, outcome, claimEndsMs);
}

/**
 * When this relay's claim on the row's next attempt runs out (real ms), or null when it does not
 * make it (storage decides: see claimDeliveryAttempt).
 */
async function claimAttempt(ctx: AttemptContext, row: DueDelivery): Promise<number | null> {
  const realNow = Date.now();
  const leaseUntil = realNow + ctx.timeoutMs + ATTEMPT_LEASE_MARGIN_MS;
  const claimed = await claimDeliveryAttempt(ctx.services.db, {
    id: row.id,
    attempts: row.attempts,
    clockNow: ctx.services.clock.iso(),
    realNow: new Date(realNow).toISOString(),
    leaseUntil: new Date(leaseUntil).toISOString(),
  });
  return claimed ? leaseUntil : null;
}

/**
 * Records the outcome, and again after a storage fault while this relay's claim lasts: no other
 * relay attempts the delivery meanwhile, and the record is written once however often it is tried
 * (recordAttempt). Without it the receiver, which has answered, would get the same event again
 * once the claim ran out. Past the claim, or once the dispatcher stops, the delivery stays pending
 * and is attempted again, which the contract allows.
 */
async function recordWhileClaimed(
  ctx: AttemptContext,
  row: DueDelivery,
  number: number,
  startedMs: number,
  outcome: AttemptOutcome,
  claimEndsMs: number,
): Promise<void> {
  await retryStorageFaults(() => recordOutcome(ctx.services, row, number, startedMs, outcome), {
    giveUpAtMs: claimEndsMs - RECORD_CLAIM_MARGIN_MS,
    stopping: ctx.stopping,
  });
}

/** Where a delivery stands after attempt `number`: delivered, failed (it was the last) or pending until the next. */
function scheduleNext(outcome: AttemptOutcome, number: number, startedMs: number): { state: AttemptRecord['state']; nextMs: number | null } {
  const nextMs = outcome.delivered ? null : nextAttemptAtMs(number, startedMs);
  return { state: outcome.delivered ? 'delivered' : nextMs === null ? 'failed' : 'pending', nextMs };
}

/** Records the attempt and the delivery's next state, then counts and logs it. */
async function recordOutcome(services: RelayServices, row: DueDelivery, number: number, startedMs: number, outcome: AttemptOutcome): Promise<void> {
  const { state, nextMs } = scheduleNext(outcome, number, startedMs);
  await services.db.write((tx) =>
    recordAttempt(tx, {
      deliveryId: row.id,
      attempt: number,
      statusCode: outcome.statusCode,
      error: outcome.error,
      attemptedAt: new Date(startedMs).toISOString(),
      durationMs: outcome.durationMs,
      responseBody: outcome.body?.text ?? null,
      responseTruncated: outcome.body?.truncated ?? false,
      state,
      nextAttemptAt: nextMs === null ? null : new Date(nextMs).toISOString(),
    }),
  );
  services.metrics.inc('raven_webhook_attempts_total', { result: outcome.delivered ? 'success' : 'failure' });
  const fields = {
    webhook_id: row.webhook_id,
    event_id: row.event_id,
    attempt: number,
    status_code: outcome.statusCode,
    error: outcome.error,
  };
  const { log } = services;
  if (state === 'delivered') log.info('webhook', 'delivered', fields);
  else if (state === 'failed') log.warn('webhook', `gave up after ${WEBHOOK_MAX_ATTEMPTS} attempts`, fields);
  else log.info('webhook', 'attempt failed; retry scheduled', { ...fields, next_attempt_at: new Date(nextMs!).toISOString() });
}

/**
 * The endpoint's URL and signing secrets (the current one, then the previous one while a rotation's
 * overlap lasts on the relay clock), or why the attempt fails without a request.
 */
function openEndpoint(services: RelayServices, row: DueDelivery): { url: URL; secrets: string[] } | { refused: string } {
  try {
    // The policy may have changed since creation (an upstream relay without local webhooks).
    const url = checkWebhookUrlSyntax(row.url, services.config.allowLocalWebhooks);
    const secrets = [services.secrets.open(row.secret_enc)];
    if (row.previous_secret_enc && row.previous_secret_until && row.previous_secret_until > services.clock.iso()) {
      secrets.push(services.secrets.open(row.previous_secret_enc));
    }
    return { url, secrets };
  } catch (error) {
    return { refused: error instanceof UrlPolicyError ? `refused by the URL policy: url ${error.message}` : 'signing secret unreadable' };
  }
}

/** One signed POST of the delivery's body; every failure is an outcome, never a throw. */
async function postDelivery(ctx: AttemptContext, row: DueDelivery, shutdown: AbortSignal): Promise<AttemptOutcome> {
  const { timeoutMs } = ctx;
  const endpoint = openEndpoint(ctx.services, row);
  if ('refused' in endpoint) return { statusCode: null, error: endpoint.refused, delivered: false, durationMs: 0, body: null };
  const { agent, request } = await ctx.client();
  const started = performance.now();
  const took = () => Math.round(performance.now() - started);
  // Fresh timestamp and signature on every attempt; the body bytes never change.
  const signed = signWebhook(row.body, endpoint.secrets, { timestamp: ctx.services.clock.unix() });
  const signal = AbortSignal.any([shutdown, AbortSignal.timeout(timeoutMs)]);
  try {
    // undici's request() never follows redirects (no redirect interceptor is installed): a 3xx
    // is an answer like any other non-2xx, and a failure.
    const res = await request(endpoint.url, {
      method: 'POST',
      dispatcher: agent,
      signal,
      headers: {
        'content-type': 'application/json',
        'user-agent': WEBHOOK_USER_AGENT,
        'service-timestamp': signed.timestamp,
        'service-signature': signed.signature,
        'service-event-id': row.event_id,
      },
      body: row.body,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const status = res.statusCode;
    const body = await readAnswerExcerpt(res.body);
    const answered = { statusCode: status, durationMs: took(), body };
    if (status >= 200 && status < 300) return { ...answered, error: null, delivered: true };
    const why = status >= 300 && status < 400 ? `redirect (HTTP ${status}) not followed` : `HTTP ${status}`;
    return { ...answered, error: why, delivered: false };
  } catch (error) {
    return { statusCode: null, error: describeNetworkError(error, signal, timeoutMs), delivered: false, durationMs: took(), body: null };
  }
}

function describeNetworkError(error: unknown, signal: AbortSignal, timeoutMs: number): string {
  const err = error as Error & { code?: string; cause?: Error & { code?: string } };
  if (err instanceof UrlPolicyError || err.cause instanceof UrlPolicyError) {
    return `refused by the URL policy: ${(err instanceof UrlPolicyError ? err : err.cause!).message}`;
  }
  const timedOut =
    (signal.aborted && (signal.reason as Error | undefined)?.name === 'TimeoutError') ||
    err.code === 'UND_ERR_HEADERS_TIMEOUT' ||
    err.code === 'UND_ERR_CONNECT_TIMEOUT' ||
    err.code === 'UND_ERR_BODY_TIMEOUT';
  if (timedOut) return `timed out after ${timeoutMs / 1000} s`;
  const code = err.code ?? err.cause?.code;
  const message = err.cause?.message ?? err.message ?? 'network error';
  return code && !message.includes(code) ? `network error: ${message} (${code})` : `network error: ${message}`;
}
