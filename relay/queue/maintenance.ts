// The worker's maintenance: recovery of dispatches a stopped process (or, on PostgreSQL, a relay
// whose lease ran out) left running, and the periodic clean-ups: bodies past their retention (with
// what is kept as long as them: delivery attempts, receivers' answers to webhooks),
// expired idempotency keys, the sink's simulation bookkeeping and unmatched complaints.
import { settleMaybeSent } from '../delivery/delivery-unknown.js';
import { forgetExpiredIdempotencyKeys } from '../domain/idempotency.js';
import { announceEvents } from '../bus.js';
import type { RelayServices } from '../services.js';
import { deletePendingComplaintsBefore, eraseBodiesTerminalBefore } from '../storage/emails.js';
import { interruptedJobs, releaseJobs } from '../storage/jobs.js';
import { refundAbandoned } from '../storage/counters.js';
import { deleteAttemptsTerminalBefore } from '../storage/delivery-attempts.js';
import { deleteSinkAttemptsBefore } from '../storage/sink-attempts.js';
import { eraseAnswersTerminalBefore } from '../storage/webhooks.js';

// Maintenance runs every minute, and whenever the test clock moves.
const MAINTENANCE_INTERVAL_MS = 60_000;

/**
 * Jobs left running by a process that stopped mid-dispatch had begun it: maybe sent, never resend
 * them (delivery/delivery-unknown.ts). On SQLite that is every running job at start-up (one relay
 * per file); on PostgreSQL, where other relays are dispatching too, the running jobs whose lease
 * ran out, looked for at start-up and then periodically.
 */
export async function recoverInterruptedJobs(services: RelayServices): Promise<number> {
  const now = services.clock.iso();
  const { count, events } = await services.db.write(async (tx) => {
    // Admission batches of a relay that died after taking their counters give them back.
    await refundAbandoned(tx, Date.now());
    const jobs = await interruptedJobs(tx, new Date().toISOString());
    if (jobs.length === 0) return { count: 0, events: [] };
    const settled = await settleMaybeSent(tx, jobs.map((j) => j.email_id), 'dispatch_interrupted', now);
    await releaseJobs(tx, jobs.map((j) => ({ id: j.id, state: 'dead', lastError: 'interrupted mid-dispatch' })), now);
    return { count: jobs.length, events: settled.flatMap((o) => o.events) };
  });
  announceEvents(services.bus, events);
  if (count > 0) services.log.warn('queue', 'recovered interrupted dispatches as delivery_unknown', { jobs: count });
  return count;
}

/** Erases bodies of emails terminal for longer than the retention, and expired idempotency keys. */
export async function runMaintenance(services: RelayServices): Promise<{ erased: number; expiredKeys: number }> {
  const nowMs = services.clock.nowMs();
  const now = new Date(nowMs).toISOString();
  const cutoff = new Date(nowMs - services.config.limits.bodyRetentionDays * 86_400_000).toISOString();
  return services.db.write(async (tx) => {
    // Delivery attempts (their SMTP conversations) and the receivers' answers to its webhooks are
    // kept as long as the body, no longer.
    await deleteAttemptsTerminalBefore(tx, cutoff);
    await eraseAnswersTerminalBefore(tx, cutoff);
    const erased = await eraseBodiesTerminalBefore(tx, cutoff, now);
    const expiredKeys = await forgetExpiredIdempotencyKeys(tx, now);
    // The sink's bookkeeping for simulations only matters while an email is being retried.
    await deleteSinkAttemptsBefore(tx, cutoff);
    await deletePendingComplaintsBefore(tx, cutoff);
    return { erased, expiredKeys };
  });
}

/** The periodic clean-ups of a running worker. */
export interface Maintenance {
  /** Runs the clean-ups now, unless a run is under way or maintenance stopped. */
  runNow(): void;
  /** No more runs; resolves when the one under way (if any) has finished writing. */
  stop(): Promise<void>;
}

/** Runs the clean-ups every MAINTENANCE_INTERVAL_MS, and whenever asked, never two at once. */
export function startMaintenance(services: RelayServices): Maintenance {
  const { log } = services;
  let stopped = false;
  let running: Promise<void> | undefined;

  async function run(): Promise<void> {
    try {
      const done = await runMaintenance(services);
      if (done.erased > 0 || done.expiredKeys > 0) log.info('queue', 'maintenance', { bodies_erased: done.erased, idempotency_keys_expired: done.expiredKeys });
    } catch (error) {
      log.error('queue', 'maintenance failed', { error: (error as Error).message });
    } finally {
      running = undefined;
    }
  }

  const runNow = () => {
    if (!stopped && !running) running = run();
  };
  const timer = setInterval(runNow, MAINTENANCE_INTERVAL_MS);
  timer.unref();
  return {
    runNow,
    async stop() {
      stopped = true;
      clearInterval(timer);
      // The database closes after the worker: a write under way must finish first.
      await running;
    },
  };
}
