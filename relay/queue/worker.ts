// The delivery worker: claims due jobs atomically, dispatches each email through the provider,
// records the outcomes, and schedules retries from the backoff table. At start-up it recovers jobs
// a previous process left running (maintenance.ts, which also runs the periodic clean-ups).
//
// Job states: ready -> running (claimed: committed before any connection is opened) -> done,
// back to ready with a later run_at (deferred recipients), or dead (retries exhausted, or the
// dispatch was interrupted). A job found running at start-up had begun its dispatch: the message
// may have been accepted, so its pending recipients become delivery_unknown and are never resent
// (delivery/delivery-unknown.ts).
import { deliveryConcurrency } from '../config.js';
import { utcDay } from '../clock.js';
import { signingKeyFor, signWithDomainKey } from '../delivery/dkim.js';
import { settleMaybeSent, type MaybeSentReason } from '../delivery/delivery-unknown.js';
import { buildOutboundMessage, senderDomain } from '../delivery/mime.js';
import type { DeliveryProvider, DeliveryResult, OutboundMessage } from '../delivery/provider.js';
import { inAdmissionBurst } from '../domain/admission.js';
import {
  PENDING_STATUSES,
  recordDeliveryResults,
  settlePendingRecipients,
  type DeliveryRecordInput,
  type RecordedOutcome,
} from '../domain/outcomes.js';
import { announceEvents } from '../domain/timeline.js';
import { countDeliveryResult } from '../metrics.js';
import type { RelayServices } from '../services.js';
import type { Queryable, WriteBatch } from '../storage/db.js';
import { loadDispatchBatch, type DispatchBatch } from '../storage/dispatch.js';
import { claimJobs, hasDueJob, recipientsHandedOverSince, releaseJobs, type ClaimedJob, type JobChange } from '../storage/jobs.js';
import { retryDelaySeconds } from './backoff.js';
import { recoverInterruptedJobs, startMaintenance } from './maintenance.js';
import { ProviderLimits } from './provider-limits.js';
import { claimJobsWithLease, renewJobLeases } from '../storage/postgres/queue.js';

// Real time: how often due jobs are looked for when nothing wakes the worker.
const POLL_INTERVAL_MS = 1_000;
// stop() waits this long for dispatches in flight; an unfinished one stays `running` and is
// recovered as delivery_unknown at the next start.
const STOP_TIMEOUT_MS = 10_000;

// Dispatches kept in flight during a burst of admissions (domain/admission.ts).
const BURST_CONCURRENCY = 8;

export interface Worker {
  stop(): Promise<void>;
}

/** Marks up to `limit` due jobs running, in one committed write, and returns them. */
export function claimDueJobs(services: RelayServices, limit: number): Promise<ClaimedJob[]> {
  const now = services.clock.iso();
  return services.db.write((tx) =>
    tx.dialect === 'postgres' ? claimJobsWithLease(tx, now, limit, leaseUntil(services)) : claimJobs(tx, now, limit),
  );
}

/** When a claim made now lapses unless renewed (real time: it is about a process being alive). */
function leaseUntil(services: RelayServices): string {
  return new Date(Date.now() + services.config.delivery.leaseSeconds * 1000).toISOString();
}

function summarize(result: DeliveryResult): string {
  const counts = new Map<string, number>();
  for (const r of result.recipients) {
    const key = r.smtpCode ? `${r.outcome} ${r.smtpCode}` : r.outcome;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([k, n]) => `${n} ${k}`).join(', ');
}

/** A provider's answer for one claimed job, to be recorded with the others that finish meanwhile. */
interface Answered {
  job: ClaimedJob;
  result: DeliveryResult;
  acceptedMeans: 'delivered' | 'sent';
  summary: string;
}

interface Recorded extends RecordedOutcome {
  /** When the deferred recipients are tried again, if they are. */
  nextAttemptAt?: string;
}

/** The outcome to record, with the retry measured from the moment it is recorded. */
function recordInput(answered: Answered, nowMs: number): DeliveryRecordInput {
  const attempt = answered.job.attempts + 1;
  const delay = retryDelaySeconds(attempt);
  const input: DeliveryRecordInput = { emailId: answered.job.email_id, result: answered.result, acceptedMeans: answered.acceptedMeans, attempt };
  if (delay !== undefined) input.nextAttemptAt = new Date(nowMs + delay * 1000).toISOString();
  return input;
}

/** Where the job goes once its answer is recorded. */
function jobAfter(answered: Answered, input: DeliveryRecordInput, outcome: RecordedOutcome): JobChange {
  const { job, summary } = answered;
  if (outcome.pending > 0 && input.nextAttemptAt !== undefined) {
    return { id: job.id, state: 'ready', runAt: input.nextAttemptAt, attempts: input.attempt, lastError: summary };
  }
  const exhausted = input.nextAttemptAt === undefined && input.result.recipients.some((r) => r.outcome === 'deferred');
  return { id: job.id, state: exhausted ? 'dead' : 'done', attempts: input.attempt, lastError: summary };
}

/** Records many answers in one unit of a group commit: a statement per table for all of them. */
async function recordAnswers(tx: Queryable, answers: Answered[], nowMs: number): Promise<Recorded[]> {
  const now = new Date(nowMs).toISOString();
  const inputs = answers.map((a) => recordInput(a, nowMs));
  const outcomes = await recordDeliveryResults(tx, inputs, now);
  await releaseJobs(tx, answers.map((a, i) => jobAfter(a, inputs[i]!, outcomes[i]!)), now);
  return outcomes.map((outcome, i) => (outcome.pending > 0 && inputs[i]!.nextAttemptAt ? { ...outcome, nextAttemptAt: inputs[i]!.nextAttemptAt } : outcome));
}

/** The worker's per-run context: what every dispatch of this worker shares. */
interface Dispatcher {
  services: RelayServices;
  provider: DeliveryProvider;
  limits: () => ProviderLimits;
  answers: WriteBatch<Answered, Recorded>;
}

/** How a dispatch ends when the provider gave no per-recipient answer. */
type Unanswered = { outcome: 'failed'; reason: 'invalid_message' } | { outcome: 'delivery_unknown'; reason: MaybeSentReason };

function releaseJob(services: RelayServices, change: JobChange): Promise<void> {
  return services.db.write((tx) => releaseJobs(tx, [change], services.clock.iso()));
}

async function dispatch(d: Dispatcher, job: ClaimedJob, batch: DispatchBatch): Promise<void> {
  const { services, provider } = d;
  const { db, clock, log } = services;
  const attempt = job.attempts + 1;
  const email = batch.emails.get(job.email_id);
  if (!email || email.pending.length === 0) return releaseJob(services, { id: job.id, state: 'done' });
  // One RCPT per distinct address, even when it is listed twice (To and CC).
  const seen = new Set<string>();
  const envelopeTo = email.pending.filter((r) => !seen.has(r.address_lc) && seen.add(r.address_lc));

  // Over the provider's rate or daily allowance: back to the queue, not a delivery attempt.
  const retryAtMs = d.limits().reserve(envelopeTo.length, clock.nowMs());
  if (retryAtMs > 0) return releaseJob(services, { id: job.id, state: 'ready', runAt: new Date(retryAtMs).toISOString() });

  // No per-recipient answer: every pending recipient ends with one outcome, and the job dies.
  const settle = async (ending: Unanswered, error: unknown) => {
    const { outcome, reason } = ending;
    log.error('queue', 'dispatch failed', { job_id: job.id, email_id: job.email_id, reason, error: (error as Error).message });
    services.metrics.inc('raven_deliveries_total', { outcome: outcome === 'failed' ? 'failed' : 'unknown' }, envelopeTo.length);
    const now = clock.iso();
    const events = await db.write(async (tx) => {
      const [settled] =
        outcome === 'failed' ? await settlePendingRecipients(tx, [job.email_id], 'failed', now, { reason }) : await settleMaybeSent(tx, [job.email_id], reason, now);
      await releaseJobs(tx, [{ id: job.id, state: 'dead', attempts: attempt, lastError: `${reason}: ${(error as Error).message}`.slice(0, 200) }], now);
      return settled!.events;
    });
    announceEvents(services.bus, events);
  };

  let message: OutboundMessage;
  try {
    message = await buildOutboundMessage(email, envelopeTo, clock.now());
    const domain = senderDomain(email.from_address);
    message.raw = await signWithDomainKey(services, signingKeyFor(batch.domainKeys, email.project_id, domain), message.raw);
  } catch (error) {
    // Nothing was sent: the message cannot be built, and never will be.
    await settle({ outcome: 'failed', reason: 'invalid_message' }, error);
    return;
  }
  let result: DeliveryResult;
  try {
    result = await provider.deliver(message);
  } catch (error) {
    // Providers report SMTP outcomes per recipient, so this is a bug; it may have happened after
    // the message was sent, so never resend.
    await settle({ outcome: 'delivery_unknown', reason: 'dispatch_error' }, error);
    return;
  }

  const answered: Answered = { job, result, acceptedMeans: provider.name === 'sink' ? 'delivered' : 'sent', summary: summarize(result) };
  let outcome: Recorded;
  try {
    outcome = await db.writeBatched(d.answers, answered);
  } catch (error) {
    // One more try, on its own (a batch fails whole): if it fails too the job stays running and
    // start-up recovery settles it.
    log.warn('queue', 'cannot record delivery outcome, retrying', { job_id: job.id, error: (error as Error).message });
    await new Promise((r) => setTimeout(r, 1_000));
    outcome = (await db.write((tx) => recordAnswers(tx, [answered], clock.nowMs())))[0]!;
  }
  announceEvents(services.bus, outcome.events);
  countDeliveryResult(services.metrics, result, answered.acceptedMeans);
  log.info('queue', 'dispatched', {
    job_id: job.id,
    email_id: job.email_id,
    attempt,
    outcome: answered.summary,
    status: outcome.status,
    ...(outcome.nextAttemptAt ? { next_attempt_at: outcome.nextAttemptAt } : {}),
  });
}

export function startWorker(services: RelayServices, provider: DeliveryProvider): Worker {
  const { db, clock, log, bus } = services;
  const concurrency = deliveryConcurrency(services.config.delivery);
  // Clients waiting on admission come first: during a burst of admissions at most the pace of an
  // upstream is kept in flight, so the CPU goes to answering them and the queue absorbs the
  // burst; full concurrency returns a second after it.
  const inBurst = Math.min(concurrency, BURST_CONCURRENCY);
  const inflight = new Set<Promise<void>>();
  const dispatching = new Set<number>(); // job ids, for lease renewal
  let stopped = false;
  let ticking = false;
  let again = false;
  let started = false; // after start-up recovery
  let limits = new ProviderLimits(services.config.delivery, 0, clock.nowMs());
  const dispatcher: Dispatcher = {
    services,
    provider,
    limits: () => limits,
    answers: { run: async (tx, items) => (await recordAnswers(tx, items, clock.nowMs())).map((value) => ({ status: 'fulfilled', value })) },
  };

  async function tick(): Promise<void> {
    if (ticking) {
      again = true;
      return;
    }
    ticking = true;
    try {
      do {
        again = false;
        const limit = inAdmissionBurst(services) ? inBurst : concurrency;
        const room = limit - inflight.size;
        // Claims are batches: a finished dispatch does not claim its successor alone, the worker
        // waits until a quarter of its slots are free (or it is idle) and claims that many at once.
        if (stopped || room <= 0 || (room < Math.max(1, Math.floor(limit / 4)) && inflight.size > 0)) break;
        if (!(await hasDueJob(db, clock.iso())) || stopped) break;
        const jobs = await claimDueJobs(services, room);
        if (jobs.length === 0) break;
        const batch = loadDispatchBatch(db, jobs.map((j) => j.email_id), PENDING_STATUSES);
        for (const job of jobs) {
          const run = batch
            .then((loaded) => dispatch(dispatcher, job, loaded))
            .catch((error: unknown) =>
              log.error('queue', 'dispatch crashed', { job_id: job.id, email_id: job.email_id, error: (error as Error).message }),
            )
            .finally(() => {
              inflight.delete(run);
              dispatching.delete(job.id);
              kick();
            });
          inflight.add(run);
          dispatching.add(job.id);
        }
        if (jobs.length === room) again = true;
      } while (again && !stopped);
    } catch (error) {
      log.error('queue', 'cannot claim jobs', { error: (error as Error).message });
    } finally {
      ticking = false;
    }
  }

  function kick(): void {
    if (!stopped && started) void tick();
  }

  const maintenance = startMaintenance(services);

  const onAdvanced = () => {
    kick();
    maintenance.runNow();
  };

  const startup = recoverInterruptedJobs(services)
    .then(async () => {
      // The daily allowance counts what was already handed to the provider today.
      const dayStart = `${utcDay(clock.nowMs())}T00:00:00.000Z`;
      limits = new ProviderLimits(services.config.delivery, await recipientsHandedOverSince(db, dayStart), clock.nowMs());
    })
    .catch((error: unknown) => log.error('queue', 'start-up recovery failed', { error: (error as Error).message }))
    .then(() => {
      started = true;
      kick();
      maintenance.runNow();
    });

  // Several relays on PostgreSQL: renew our claims, and settle those of relays that died.
  const leaseMs = services.config.delivery.leaseSeconds * 1000;
  const leases =
    db.dialect === 'postgres'
      ? setInterval(() => {
          renewJobLeases(db, [...dispatching], leaseUntil(services)).catch((error: unknown) =>
            log.warn('queue', 'cannot renew job leases', { error: (error as Error).message }),
          );
          if (started && !stopped) {
            recoverInterruptedJobs(services).catch((error: unknown) =>
              log.warn('queue', 'cannot recover expired job leases', { error: (error as Error).message }),
            );
          }
        }, Math.max(250, leaseMs / 3))
      : undefined;
  leases?.unref();
  const poll = setInterval(kick, POLL_INTERVAL_MS);
  poll.unref();
  bus.on('jobs.ready', kick);
  clock.on('advanced', onAdvanced);
  services.health.worker = true;
  log.info('queue', 'worker started', { concurrency, provider: provider.name });

  return {
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(poll);
      const maintained = maintenance.stop();
      clearInterval(leases);
      bus.off('jobs.ready', kick);
      clock.off('advanced', onAdvanced);
      await startup;
      let timer: NodeJS.Timeout | undefined;
      const timedOut = await Promise.race([
        Promise.allSettled([...inflight]).then(() => false),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(true), STOP_TIMEOUT_MS);
        }),
      ]);
      clearTimeout(timer);
      if (timedOut) log.warn('queue', 'stopped with dispatches in flight; they are recovered at the next start', { in_flight: inflight.size });
      // Wait for a maintenance write in progress: the database closes after the worker.
      await maintained;
      services.health.worker = false;
      await provider.close();
      log.info('queue', 'worker stopped');
    },
  };
}
