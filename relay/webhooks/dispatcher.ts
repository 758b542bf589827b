// The webhook dispatcher: drains the outbox (webhook_deliveries, written in the transaction of the
// event that caused it) into signed POSTs. A delivery is `pending` until a 2xx answer (delivered)
// or its seventh failed attempt (failed); each attempt is a row in webhook_attempts, and the next
// one is due on the schedule in schedule.ts, measured from the previous attempt on the relay clock.
// Everything lives in SQLite, so pending deliveries simply carry on after a restart.
import { Agent, request } from 'undici';
import { signWebhook } from 'raven-email-sdk';
import type { RelayServices } from '../services.js';
import { claimWebhookAttempt, releaseWebhookAttempt } from '../storage/postgres/queue.js';
import { deliveryProgress, dueDeliveries, nextDeliveryDueAfter, recordAttempt, type DueDelivery } from '../storage/webhooks.js';
import { nextAttemptAtMs, WEBHOOK_MAX_ATTEMPTS } from './schedule.js';
import { checkWebhookUrlSyntax, createGuardedConnector, UrlPolicyError } from './url-policy.js';

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
/** Response bodies are read and thrown away, up to this much, so connections can be reused. */
const MAX_RESPONSE_BYTES = 64 * 1024;
// An attempt's claim outlives its time-out by this much: past it the relay is taken for dead.
const ATTEMPT_LEASE_MARGIN_MS = 10_000;

interface AttemptOutcome {
  statusCode: number | null;
  error: string | null;
  delivered: boolean;
}

export interface WebhookDispatcher {
  stop(): Promise<void>;
}

export function startWebhookDispatcher(services: RelayServices, options: DispatcherOptions = {}): WebhookDispatcher {
  const { db, clock, bus, log, secrets, config } = services;
  const timeoutMs = options.timeoutMs ?? webhookDispatcherDefaults.timeoutMs;
  const concurrency = options.concurrency ?? webhookDispatcherDefaults.concurrency;
  const agent = new Agent({
    connect: createGuardedConnector(config.allowLocalWebhooks, timeoutMs),
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    keepAliveTimeout: 4_000,
  });

  // One slow endpoint (10 s time-outs) must not take every slot: it gets at most half of them.
  const perEndpoint = Math.max(1, Math.floor(concurrency / 2));
  const inFlight = new Map<number, { promise: Promise<void>; abort: AbortController; webhookId: string }>();
  let stopping = false;
  let scanning = false;
  let rescan = false;
  let timer: NodeJS.Timeout | undefined;

  const wake = () => void scan();
  bus.on('webhooks.ready', wake);
  clock.on('advanced', wake);

  async function scan(): Promise<void> {
    if (stopping) return;
    if (scanning) {
      rescan = true;
      return;
    }
    scanning = true;
    try {
      do {
        rescan = false;
        await claimAndSend();
      } while (rescan && !stopping);
      await armTimer();
    } catch (error) {
      if (!stopping) log.error('webhook', 'scan failed', { error: (error as Error).message });
      armRetryTimer(1_000);
    } finally {
      scanning = false;
    }
  }

  async function claimAndSend(): Promise<void> {
    const free = concurrency - inFlight.size;
    if (free <= 0) return;
    // The oldest due rows, at most perEndpoint per endpoint (its in-flight ones count among them),
    // so a backlog on one endpoint never hides the due rows of the others.
    const rows = await dueDeliveries(db, clock.iso(), perEndpoint, concurrency + inFlight.size);
    const busy = new Map<string, number>();
    for (const f of inFlight.values()) busy.set(f.webhookId, (busy.get(f.webhookId) ?? 0) + 1);
    for (const row of rows) {
      if (stopping || inFlight.size >= concurrency) break;
      if (inFlight.has(row.id) || (busy.get(row.webhook_id) ?? 0) >= perEndpoint) continue;
      busy.set(row.webhook_id, (busy.get(row.webhook_id) ?? 0) + 1);
      const abort = new AbortController();
      const promise = attempt(row, abort.signal)
        .catch((error: unknown) => {
          if (!stopping) log.error('webhook', 'attempt failed to record', { delivery_id: row.id, error: (error as Error).message });
        })
        .finally(() => {
          inFlight.delete(row.id);
          if (!stopping) void scan();
        });
      inFlight.set(row.id, { promise, abort, webhookId: row.webhook_id });
    }
  }

  /**
   * Sleeps until the next pending delivery is due (in real time). While attempts are in flight,
   * due rows left unclaimed are waiting for a slot, and the end of each attempt rescans; so only
   * future rows set the timer then (otherwise a busy endpoint would make this spin).
   */
  async function armTimer(): Promise<void> {
    if (stopping) return;
    const next = await nextDeliveryDueAfter(db, inFlight.size === 0 ? '' : clock.iso());
    if (!next) {
      armRetryTimer(MAX_IDLE_MS);
      return;
    }
    armRetryTimer(Math.min(MAX_IDLE_MS, Math.max(0, Date.parse(next) - clock.nowMs())));
  }

  function armRetryTimer(ms: number): void {
    if (timer) clearTimeout(timer);
    if (stopping) return;
    timer = setTimeout(wake, ms);
    timer.unref();
  }

  /**
   * Whether the row as scanned is still the row to send. A scan's read can start before another
   * attempt of the same row commits and be handled after that attempt left inFlight: without this
   * fresh look (after the commit, so it sees it) the row would be sent twice.
   */
  async function stillDue(row: DueDelivery): Promise<boolean> {
    const now = await deliveryProgress(db, row.id);
    return now !== undefined && now.state === 'pending' && now.attempts === row.attempts && (now.next_attempt_at ?? '') <= clock.iso();
  }

  /**
   * Whether this relay makes the row's next attempt. On PostgreSQL other relays scan the same
   * outbox: one claim (with a lease, in case this relay dies mid-attempt) decides which of them.
   */
  function claim(row: DueDelivery): Promise<boolean> {
    if (db.dialect !== 'postgres') return stillDue(row);
    const realNow = Date.now();
    const leaseUntil = new Date(realNow + timeoutMs + ATTEMPT_LEASE_MARGIN_MS).toISOString();
    return claimWebhookAttempt(db, row.id, row.attempts, clock.iso(), new Date(realNow).toISOString(), leaseUntil);
  }

  async function attempt(row: DueDelivery, signal: AbortSignal): Promise<void> {
    if (!(await claim(row))) return;
    const number = row.attempts + 1;
    const startedMs = clock.nowMs();
    const outcome = await send(row, signal);
    if (signal.aborted && stopping) {
      // Shutdown cut it short: not an attempt, retried after restart (or at once by another relay).
      if (db.dialect === 'postgres') await db.write((tx) => releaseWebhookAttempt(tx, row.id));
      return;
    }

    const attemptedAt = new Date(startedMs).toISOString();
    const nextMs = outcome.delivered ? null : nextAttemptAtMs(number, startedMs);
    const state = outcome.delivered ? 'delivered' : nextMs === null ? 'failed' : 'pending';
    await db.write((tx) =>
      recordAttempt(tx, {
        deliveryId: row.id,
        attempt: number,
        statusCode: outcome.statusCode,
        error: outcome.error,
        attemptedAt,
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
    if (state === 'delivered') log.info('webhook', 'delivered', fields);
    else if (state === 'failed') log.warn('webhook', `gave up after ${WEBHOOK_MAX_ATTEMPTS} attempts`, fields);
    else log.info('webhook', 'attempt failed; retry scheduled', { ...fields, next_attempt_at: new Date(nextMs!).toISOString() });
  }

  async function send(row: DueDelivery, shutdown: AbortSignal): Promise<AttemptOutcome> {
    let url: URL;
    let secret: string;
    try {
      // The policy may have changed since creation (an upstream relay without local webhooks).
      url = checkWebhookUrlSyntax(row.url, config.allowLocalWebhooks);
      secret = secrets.open(row.secret_enc);
    } catch (error) {
      const message = error instanceof UrlPolicyError ? `refused by the URL policy: url ${error.message}` : 'signing secret unreadable';
      return { statusCode: null, error: message, delivered: false };
    }
    // Fresh timestamp and signature on every attempt; the body bytes never change.
    const signed = signWebhook(row.body, secret, { timestamp: clock.unix() });
    const signal = AbortSignal.any([shutdown, AbortSignal.timeout(timeoutMs)]);
    try {
      // undici's request() never follows redirects (no redirect interceptor is installed): a 3xx
      // is an answer like any other non-2xx, and a failure.
      const res = await request(url, {
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
      await res.body.dump({ limit: MAX_RESPONSE_BYTES, signal }).catch(() => undefined);
      if (status >= 200 && status < 300) return { statusCode: status, error: null, delivered: true };
      const why = status >= 300 && status < 400 ? `redirect (HTTP ${status}) not followed` : `HTTP ${status}`;
      return { statusCode: status, error: why, delivered: false };
    } catch (error) {
      return { statusCode: null, error: describeNetworkError(error, signal, timeoutMs), delivered: false };
    }
  }

  void scan();

  return {
    async stop() {
      if (stopping) return;
      stopping = true;
      bus.off('webhooks.ready', wake);
      clock.off('advanced', wake);
      if (timer) clearTimeout(timer);
      const pending = [...inFlight.values()];
      const grace = new Promise<void>((resolve) => setTimeout(resolve, STOP_GRACE_MS).unref());
      await Promise.race([Promise.all(pending.map((p) => p.promise)), grace]);
      for (const p of inFlight.values()) p.abort.abort();
      await Promise.all([...inFlight.values()].map((p) => p.promise));
      await agent.close().catch(() => undefined);
    },
  };
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
