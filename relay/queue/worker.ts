// The delivery worker: claims due jobs atomically (claimDueJobs, DeliveryWorker.tick), dispatches
// each email through the provider (dispatchJob), records the outcomes (recordOutcome) and schedules
// retries from the backoff table (scheduleNextAttempt, jobAfter). At start-up it recovers jobs a
// previous process left running (maintenance.ts, which also runs the periodic clean-ups).
//
// Job states: ready -> running (claimed: committed before any connection is opened) -> done,
// back to ready with a later run_at (deferred recipients), or dead (retries exhausted, or the
// dispatch was interrupted). A job found running at start-up had begun its dispatch, or was
// claimed for one: the message may have been accepted, so its pending recipients become
// delivery_unknown and are never resent (delivery/delivery-unknown.ts). Jobs claimed ahead and not
// begun when the worker stops go back to ready (DeliveryWorker.releaseReserve).
import { deliveryConcurrency } from '../config.js';
import { utcDay } from '../clock.js';
import { buildSignedMessage, dkimSigning, signingKeyFor } from '../delivery/dkim.js';
import { settleMaybeSent, type MaybeSentReason } from '../delivery/delivery-unknown.js';
import type { OutboundJob } from '../delivery/outbound.js';
import type { DeliveryProvider, OutboundMessage, ThreadedProvider } from '../delivery/provider.js';
import { replayLogs } from '../delivery/thread-logs.js';
import type { DeliveryResult } from '../mail/delivery-result.js';
import { senderDomain } from '../mail/mailbox.js';
import { burstAllowance } from '../domain/admission-load.js';
import {
  PENDING_STATUSES,
  recordDeliveryResults,
  settlePendingRecipients,
  type DeliveryRecordInput,
  type RecordedOutcome,
} from '../domain/outcomes.js';
import { announceEvents } from '../bus.js';
import { countDeliveryResult } from '../metrics.js';
import type { RelayServices } from '../services.js';
import type { Queryable, WriteBatch } from '../storage/db.js';
import { retryStorageFaults } from '../storage/retry.js';
import { loadDispatchBatch, type DispatchBatch, type DispatchEmail, type PendingRecipient } from '../storage/dispatch.js';
import {
  claimBatch,
  hasDueJob,
  jobClaimsLease,
  recipientsHandedOverSince,
  releaseJobs,
  renewJobLeases,
  type ClaimedJob,
  type JobChange,
} from '../storage/jobs.js';
import { ThreadsUnavailableError } from '../threads/pool.js';
import { workerThreads } from '../threads/work.js';
import { retryDelaySeconds } from './backoff.js';
import { recoverInterruptedJobs, startMaintenance, type Maintenance } from './maintenance.js';
import { ProviderLimits } from './provider-limits.js';

// Real time: how often due jobs are looked for when nothing wakes the worker.
const POLL_INTERVAL_MS = 1_000;
// stop() waits this long for dispatches in flight; an unfinished one stays `running` and is
// recovered as delivery_unknown at the next start.
const STOP_TIMEOUT_MS = 10_000;

// Dispatches kept in flight during a burst of admissions, by one of the relays in it
// (domain/admission-load.ts)...
const BURST_CONCURRENCY = 8;
// ...and this many while the queue is behind: from a claim whose oldest job had waited longer than
// BEHIND_LAG_MS since it fell due until one whose oldest had waited under CAUGHT_UP_MS, or the queue
// is empty. Sustained load is one long burst, and the queue must keep pace with it, not absorb
// all of it (at 8 in flight a loaded relay delivered 30 - 60 emails/s while admitting 400). Not
// full concurrency: 64 in flight took a fifth of a burst's admissions (BENCHMARKS.md, issue 24,
// session 8). Behind lasts until the
// queue has caught up, not a fixed time: when it lapsed a second after the last late claim, the
// worker fell back to 8 with 32 in flight and claimed nothing (and so saw no lag) until 26 of them
// had ended, while the queue kept growing (BENCHMARKS.md, issue 24, session 10).
const BEHIND_CONCURRENCY = 32;
const BEHIND_LAG_MS = 200;
const CAUGHT_UP_MS = 50;
// ...and this many, behind or not, while the burst saturates the relay (domain/admission-load.ts:
// admissions kept waiting for a second without a break, as a closed loop of clients keeps them):
// admission gets the CPU first and delivery what is left. Such a burst is always behind (the
// admission bench admits five times what the relay delivers), so at 32 in flight every dispatch
// was CPU and writer commits its clients did not get (BENCHMARKS.md, issue 24, session 11). Not
// none: delivery always progresses, and catches up at BEHIND_CONCURRENCY, then at full
// concurrency, once the saturation lapses.
const SATURATED_CONCURRENCY = 2;

/**
 * Jobs claimed ahead of the in-flight limit, so an answered dispatch's successor begins at once
 * instead of after a claim's wait for the writer: with the slots counted until each outcome had
 * committed and claimed only once a quarter were free, the sustained run kept a median of about 30
 * of 64 in flight with thousands of jobs waiting (BENCHMARKS.md, issue 24, session 12).
 */
export function claimAhead(limit: number): number {
  return Math.floor(limit / 2);
}

/** Which in-flight limit applies (raven_delivery_pacing_seconds_total). */
export type Pacing = 'full' | 'burst' | 'behind' | 'saturated';

/**
 * How many dispatches to keep in flight: all of them, unless admissions are in a burst; then this
 * relay's share (`burstShare`: undefined when there is no burst) of the in-burst allowance, which
 * depends on whether the burst saturates the relay. `paced` is told which limit applies.
 */
export function inFlightLimit(
  concurrency: number,
  queueBehind: boolean,
  burstShare: (allowance: (saturated: boolean) => number) => number | undefined,
  paced: (pacing: Pacing) => void = () => {},
): number {
  let pacing: Pacing = 'full';
  const allowance = (saturated: boolean) => {
    pacing = saturated ? 'saturated' : queueBehind ? 'behind' : 'burst';
    return Math.min(concurrency, saturated ? SATURATED_CONCURRENCY : queueBehind ? BEHIND_CONCURRENCY : BURST_CONCURRENCY);
  };
  const share = burstShare(allowance);
  paced(share === undefined ? 'full' : pacing);
  return share ?? concurrency;
}

/**
 * Whether the queue is behind after a claim of `jobs` (`behind`: whether it was before): it falls
 * behind when one of them had waited more than BEHIND_LAG_MS since it fell due, and stays behind
 * until every one had waited less than CAUGHT_UP_MS.
 */
export function behindAfterClaim(behind: boolean, jobs: readonly Pick<ClaimedJob, 'run_at'>[], nowMs: number): boolean {
  const waited = Math.max(...jobs.map((j) => nowMs - Date.parse(j.run_at)));
  return waited > BEHIND_LAG_MS || (behind && waited >= CAUGHT_UP_MS);
}

export interface Worker {
  stop(): Promise<void>;
}

/** Marks up to `limit` due jobs running, in one committed write, and returns them. */
export function claimDueJobs(services: RelayServices, limit: number): Promise<ClaimedJob[]> {
  return services.db.writeBatched(claimBatch, { now: services.clock.iso(), limit, leaseUntil: leaseUntil(services) });
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
  /** When the provider was handed the message (relay clock). */
  startedAt: string;
  provider: 'sink' | 'smtp';
}

interface Recorded extends RecordedOutcome {
  /** When the deferred recipients are tried again, if they are. */
  nextAttemptAt?: string;
}

/** The outcome to record, with the next attempt (if any) measured from the moment it is recorded. */
function scheduleNextAttempt(answered: Answered, nowMs: number): DeliveryRecordInput {
  const attempt = answered.job.attempts + 1;
  const delay = retryDelaySeconds(attempt);
  const input: DeliveryRecordInput = {
    emailId: answered.job.email_id,
    result: answered.result,
    acceptedMeans: answered.acceptedMeans,
    attempt,
    startedAt: answered.startedAt,
    provider: answered.provider,
  };
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
  const inputs = answers.map((a) => scheduleNextAttempt(a, nowMs));
  // The jobs' next state depends only on the decided outcomes: written in the same trips as them.
  const outcomes = await recordDeliveryResults(tx, inputs, now, (decided) =>
    releaseJobs(tx, answers.map((a, i) => jobAfter(a, inputs[i]!, decided[i]!)), now),
  );
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

/** One RCPT per distinct address, even when it is listed twice (To and CC). */
function envelopeRecipients(email: DispatchEmail): PendingRecipient[] {
  const seen = new Set<string>();
  return email.pending.filter((r) => !seen.has(r.address_lc) && seen.add(r.address_lc));
}

/** What a dispatch came to before its outcome is recorded. */
type Delivered =
  | { kind: 'answered'; result: DeliveryResult; startedAt: string }
  /** Nothing was sent: the message cannot be built, and never will be. */
  | { kind: 'unbuildable'; error: Error }
  /** The provider threw, or the thread died, after the message may have gone: never resent. */
  | { kind: 'maybeSent'; error: Error };

/** The job a message is built from: its columns, the envelope's recipients, the Date header and the sender domain's key. */
function outboundJob(services: RelayServices, batch: DispatchBatch, email: DispatchEmail, envelopeTo: PendingRecipient[]): OutboundJob {
  const { pending: _pending, project_id: _project, ...forMime } = email;
  const key = signingKeyFor(batch.domainKeys, email.project_id, senderDomain(email.from_address));
  return { email: forMime, recipients: envelopeTo, date: services.clock.now(), ...dkimSigning(services, key) };
}

/**
 * The whole delivery on a worker thread (delivery/thread-delivery.ts): build, sign and the SMTP
 * conversation. Undefined when no thread could run it before the message's bytes started to go
 * (none alive, or one died early): the caller then delivers it here.
 */
async function deliverOnThread(services: RelayServices, onThread: ThreadedProvider, job: OutboundJob): Promise<Delivered | undefined> {
  const sending = new Int32Array(new SharedArrayBuffer(4));
  const startedAt = services.clock.iso();
  const { target: _target, ...provider } = onThread;
  try {
    let answer = await workerThreads.run('deliverOutbound', { ...job, provider, sending });
    if (answer.kind === 'needsTarget') answer = await workerThreads.run('deliverOutbound', { ...job, provider: onThread, sending });
    if (answer.kind === 'needsTarget') return undefined;
    replayLogs(services.log, answer.logs);
    if (answer.kind === 'answered') return { kind: 'answered', result: answer.result, startedAt };
    return { kind: answer.kind === 'unbuildable' ? 'unbuildable' : 'maybeSent', error: new Error(answer.error) };
  } catch (error) {
    if (Atomics.load(sending, 0) === 0 && error instanceof ThreadsUnavailableError) return undefined;
    return { kind: 'maybeSent', error: error as Error };
  }
}

/** The delivery on this thread (the message still built on a worker thread when one can). */
async function deliverHere(services: RelayServices, provider: DeliveryProvider, job: OutboundJob): Promise<Delivered> {
  let message: OutboundMessage;
  try {
    message = await buildSignedMessage(services, job);
  } catch (error) {
    return { kind: 'unbuildable', error: error as Error };
  }
  const startedAt = services.clock.iso();
  try {
    return { kind: 'answered', result: await provider.deliver(message), startedAt };
  } catch (error) {
    return { kind: 'maybeSent', error: error as Error };
  }
}

/** The whole delivery on a worker thread, else here. */
async function deliver(services: RelayServices, provider: DeliveryProvider, makeJob: () => OutboundJob): Promise<Delivered> {
  let job: OutboundJob;
  try {
    job = makeJob();
  } catch (error) {
    return { kind: 'unbuildable', error: error as Error };
  }
  return (provider.onThread && (await deliverOnThread(services, provider.onThread, job))) || deliverHere(services, provider, job);
}

/**
 * Dispatches one claimed job: build, hand to the provider, record the answer. `answered` is called
 * once the provider has answered (or nothing will be sent), before the outcome is recorded.
 */
async function dispatchJob(d: Dispatcher, job: ClaimedJob, batch: DispatchBatch, answered: () => void): Promise<void> {
  const { services, provider } = d;
  const email = batch.emails.get(job.email_id);
  if (!email || email.pending.length === 0) return releaseJob(services, { id: job.id, state: 'done' });
  const envelopeTo = envelopeRecipients(email);

  // Over the provider's rate or daily allowance: back to the queue, not a delivery attempt.
  const retryAtMs = d.limits().reserve(envelopeTo.length, services.clock.nowMs());
  if (retryAtMs > 0) return releaseJob(services, { id: job.id, state: 'ready', runAt: new Date(retryAtMs).toISOString() });

  const delivered = await deliver(services, provider, () => outboundJob(services, batch, email, envelopeTo));
  answered();
  // Nothing was sent: the message cannot be built, and never will be.
  if (delivered.kind === 'unbuildable') return settleUnanswered(services, job, envelopeTo.length, { outcome: 'failed', reason: 'invalid_message' }, delivered.error);
  // Providers report SMTP outcomes per recipient, so this is a bug or a thread that died; it may
  // have happened after the message was sent, so never resend.
  if (delivered.kind === 'maybeSent') return settleUnanswered(services, job, envelopeTo.length, { outcome: 'delivery_unknown', reason: 'dispatch_error' }, delivered.error);
  const { result, startedAt } = delivered;

  const answer: Answered = {
    job,
    result,
    acceptedMeans: provider.name === 'sink' ? 'delivered' : 'sent',
    summary: summarize(result),
    startedAt,
    provider: provider.name,
  };
  const outcome = await recordOutcome(d, answer);
  announceEvents(services.bus, outcome.events);
  countDeliveryResult(services.metrics, result, answer.acceptedMeans);
  services.log.info('queue', 'dispatched', {
    job_id: job.id,
    email_id: job.email_id,
    attempt: job.attempts + 1,
    outcome: answer.summary,
    status: outcome.status,
    ...(outcome.nextAttemptAt ? { next_attempt_at: outcome.nextAttemptAt } : {}),
  });
}

/** No per-recipient answer: every pending recipient ends with one outcome, and the job dies. */
async function settleUnanswered(services: RelayServices, job: ClaimedJob, recipients: number, ending: Unanswered, error: unknown): Promise<void> {
  const { outcome, reason } = ending;
  services.log.error('queue', 'dispatch failed', { job_id: job.id, email_id: job.email_id, reason, error: (error as Error).message });
  services.metrics.inc('raven_deliveries_total', { outcome: outcome === 'failed' ? 'failed' : 'unknown' }, recipients);
  const now = services.clock.iso();
  const events = await services.db.write(async (tx) => {
    const [settled] =
      outcome === 'failed' ? await settlePendingRecipients(tx, [job.email_id], 'failed', now, { reason }) : await settleMaybeSent(tx, [job.email_id], reason, now);
    const lastError = `${reason}: ${(error as Error).message}`.slice(0, 200);
    await releaseJobs(tx, [{ id: job.id, state: 'dead', attempts: job.attempts + 1, lastError }], now);
    return settled!.events;
  });
  announceEvents(services.bus, events);
}

/** Records the provider's answer with the others that finish meanwhile (one group commit). */
async function recordOutcome(d: Dispatcher, answered: Answered): Promise<Recorded> {
  const { db, clock, log } = d.services;
  try {
    return await db.writeBatched(d.answers, answered);
  } catch (error) {
    // Again on its own (a batch fails whole), and while the storage is away for a moment, for half
    // a lease (the job's lease is renewed meanwhile): the provider has answered, and a job left
    // running is settled as delivery_unknown by recovery.
    log.warn('queue', 'cannot record delivery outcome, retrying', { job_id: answered.job.id, error: (error as Error).message });
    const giveUpAtMs = Date.now() + (d.services.config.delivery.leaseSeconds * 1_000) / 2;
    return retryStorageFaults(async () => (await db.write((tx) => recordAnswers(tx, [answered], clock.nowMs())))[0]!, { giveUpAtMs });
  }
}

export function startWorker(services: RelayServices, provider: DeliveryProvider): Worker {
  // No worker thread is started here: the first task starts one (ThreadPool.pick()). A relay that
  // delivers nothing (a test's, one only read) never pays a thread's half CPU second of loading.
  const worker = new DeliveryWorker(services, provider);
  worker.start();
  return { stop: () => worker.stop() };
}

/**
 * The claim loop: claims due jobs into free slots whenever woken (a new job, the end of a
 * dispatch, the test clock, the poll), after start-up recovery has settled what a previous
 * process left running.
 */
class DeliveryWorker implements Worker {
  private readonly concurrency: number;
  /** Every dispatch not ended: delivering, or recording its outcome (stop() waits for them). */
  private readonly inflight = new Set<Promise<void>>();
  /** Dispatches the provider has not answered yet: what the in-flight limit counts. */
  private delivering = 0;
  /** Answered dispatches whose outcome is not committed yet. */
  private recording = 0;
  /** Claimed ahead, not begun: each begins as soon as a dispatch is answered (claimAhead). */
  private reserve: Array<{ job: ClaimedJob; batch: Promise<DispatchBatch> }> = [];
  private readonly dispatching = new Set<number>(); // job ids, for lease renewal
  private readonly dispatcher: Dispatcher;
  private limits: ProviderLimits;
  private stopped = false;
  private ticking = false;
  private again = false;
  private started = false; // after start-up recovery
  private behind = false; // whether the queue is behind (behindAfterClaim); false once it is empty
  private pacing: Pacing = 'full';
  private pacedAt = performance.now();
  private maintenance!: Maintenance;
  private startup!: Promise<void>;
  private poll?: NodeJS.Timeout;
  private leases?: NodeJS.Timeout;
  private readonly kick = (): void => {
    if (!this.stopped && this.started) void this.tick();
  };
  private readonly onAdvanced = (): void => {
    this.kick();
    this.maintenance.runNow();
  };

  constructor(
    private readonly services: RelayServices,
    private readonly provider: DeliveryProvider,
  ) {
    const { clock } = services;
    this.concurrency = deliveryConcurrency(services.config);
    this.limits = new ProviderLimits(services.config.delivery, 0, clock.nowMs());
    this.dispatcher = {
      services,
      provider,
      limits: () => this.limits,
      answers: { run: async (tx, items) => (await recordAnswers(tx, items, clock.nowMs())).map((value) => ({ status: 'fulfilled', value })) },
    };
  }

  start(): void {
    const { services } = this;
    this.maintenance = startMaintenance(services);
    this.startup = this.recoverThenStart();
    // Several relays on PostgreSQL: renew our claims, and settle those of relays that died.
    if (jobClaimsLease(services.db)) {
      this.leases = setInterval(() => this.tendLeases(), Math.max(250, (services.config.delivery.leaseSeconds * 1000) / 3));
      this.leases.unref();
    }
    this.poll = setInterval(this.kick, POLL_INTERVAL_MS);
    this.poll.unref();
    services.bus.on('jobs.ready', this.kick);
    services.clock.on('advanced', this.onAdvanced);
    services.health.worker = true;
    services.log.info('queue', 'worker started', { concurrency: this.concurrency, provider: this.provider.name });
  }

  /** Settles what a previous process left running, then starts claiming. */
  private async recoverThenStart(): Promise<void> {
    const { db, clock, log } = this.services;
    try {
      await recoverInterruptedJobs(this.services);
      // The daily allowance counts what was already handed to the provider today.
      const dayStart = `${utcDay(clock.nowMs())}T00:00:00.000Z`;
      this.limits = new ProviderLimits(this.services.config.delivery, await recipientsHandedOverSince(db, dayStart), clock.nowMs());
    } catch (error) {
      log.error('queue', 'start-up recovery failed', { error: (error as Error).message });
    }
    this.started = true;
    this.kick();
    this.maintenance.runNow();
  }

  private tendLeases(): void {
    const { db, log } = this.services;
    renewJobLeases(db, [...this.dispatching], leaseUntil(this.services)).catch((error: unknown) =>
      log.warn('queue', 'cannot renew job leases', { error: (error as Error).message }),
    );
    if (this.started && !this.stopped) {
      recoverInterruptedJobs(this.services).catch((error: unknown) =>
        log.warn('queue', 'cannot recover expired job leases', { error: (error as Error).message }),
      );
    }
  }

  private async tick(): Promise<void> {
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = true;
    try {
      // `continue` after a read, not `break`: a kick that came while it ran (a job committed after
      // it looked) is honoured by the loop's condition instead of waiting for the poll.
      do {
        this.again = false;
        // Jobs claimed ahead while the limit was lower (another relay's burst: none) begin once it
        // has room again: nothing else would begin them when no claim and no answer comes (the
        // jobs left are these), and the queue stalled on them (issue 24, session 12).
        this.beginReserved();
        const room = this.room();
        if (room === 0) break;
        if (!(await hasDueJob(this.services.db, this.services.clock.iso()))) {
          this.behind = false;
          continue;
        }
        if (this.stopped) break;
        const jobs = await claimDueJobs(this.services, room);
        if (jobs.length === 0) continue;
        this.behind = behindAfterClaim(this.behind, jobs, this.services.clock.nowMs());
        const batch = loadDispatchBatch(this.services.db, jobs.map((j) => j.email_id), PENDING_STATUSES);
        for (const job of jobs) {
          this.dispatching.add(job.id);
          this.reserve.push({ job, batch });
        }
        this.beginReserved();
        if (jobs.length === room) this.again = true;
      } while (this.again && !this.stopped);
    } catch (error) {
      this.services.log.error('queue', 'cannot claim jobs', { error: (error as Error).message });
    } finally {
      this.ticking = false;
    }
  }

  /**
   * How many jobs to claim now, 0 for none: up to the in-flight limit and claimAhead more, counting
   * the dispatches not yet answered and the jobs claimed ahead. Claims are batches: the worker
   * waits until a quarter of the limit is free (or it holds nothing) and claims that many at once.
   * None while as many outcomes as the limit wait for the writer: a writer that falls behind holds
   * delivery back instead of piling answers up.
   */
  private room(): number {
    // Clients waiting on admission come first: during a burst of admissions at most the pace of an
    // upstream is kept in flight (shared among the relays in the burst), so the CPU goes to
    // answering them and the queue absorbs the burst, unless it falls behind; while the burst
    // saturates the relay, two; full concurrency returns a second after the burst.
    const limit = this.limit();
    const held = this.delivering + this.reserve.length;
    const batchOf = Math.max(1, Math.floor(limit / 4));
    const room = limit + claimAhead(limit) - held;
    if (this.stopped || room <= 0 || (room < batchOf && held > 0) || this.recording >= limit) return 0;
    return room;
  }

  private limit(): number {
    return inFlightLimit(this.concurrency, this.behind, (allowance) => burstAllowance(this.services, allowance), this.paced);
  }

  /** Counts the time since the last look at the limit to the pacing then in force. */
  private readonly paced = (pacing: Pacing): void => {
    const now = performance.now();
    this.services.metrics.inc('raven_delivery_pacing_seconds_total', { mode: this.pacing }, (now - this.pacedAt) / 1000);
    this.pacing = pacing;
    this.pacedAt = now;
  };

  /** Begins reserved jobs while the in-flight limit has room. */
  private beginReserved(): void {
    if (this.reserve.length === 0 || this.stopped) return;
    const limit = this.limit();
    while (this.reserve.length > 0 && this.delivering < limit) {
      const { job, batch } = this.reserve.shift()!;
      this.begin(job, batch);
    }
  }

  /**
   * Dispatches a claimed job in a slot. The slot is free again once the provider has answered: a
   * reserved job takes it at once, and the worker claims again, while the outcome is recorded.
   */
  private begin(job: ClaimedJob, batch: Promise<DispatchBatch>): void {
    this.delivering++;
    let answered = false;
    const onAnswered = (): void => {
      if (answered) return;
      answered = true;
      this.delivering--;
      this.recording++;
      this.beginReserved();
      this.kick();
    };
    const run = batch
      .then((loaded) => dispatchJob(this.dispatcher, job, loaded, onAnswered))
      .catch((error: unknown) =>
        this.services.log.error('queue', 'dispatch crashed', { job_id: job.id, email_id: job.email_id, error: (error as Error).message }),
      )
      .finally(() => {
        onAnswered();
        this.recording--;
        this.inflight.delete(run);
        this.dispatching.delete(job.id);
        this.kick();
      });
    this.inflight.add(run);
  }

  /** Jobs claimed ahead and never begun go back to the queue as they were: nothing was sent. */
  private async releaseReserve(): Promise<void> {
    // A claim still under way adds to the reserve when it returns.
    while (this.ticking) await new Promise((r) => setTimeout(r, 5));
    const reserved = this.reserve.splice(0);
    if (reserved.length === 0) return;
    for (const { job } of reserved) this.dispatching.delete(job.id);
    await this.services.db
      .write((tx) => releaseJobs(tx, reserved.map(({ job }) => ({ id: job.id, state: 'ready' })), this.services.clock.iso()))
      .catch((error: unknown) => this.services.log.warn('queue', 'cannot release reserved jobs', { error: (error as Error).message }));
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    const { services } = this;
    this.stopped = true;
    clearInterval(this.poll);
    const maintained = this.maintenance.stop();
    clearInterval(this.leases);
    services.bus.off('jobs.ready', this.kick);
    services.clock.off('advanced', this.onAdvanced);
    await this.startup;
    await this.releaseReserve();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      Promise.allSettled([...this.inflight]).then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), STOP_TIMEOUT_MS);
      }),
    ]);
    clearTimeout(timer);
    if (timedOut) services.log.warn('queue', 'stopped with dispatches in flight; they are recovered at the next start', { in_flight: this.inflight.size });
    // Wait for a maintenance write in progress: the database closes after the worker.
    await maintained;
    services.health.worker = false;
    await this.provider.close();
    if (this.provider.onThread) await workerThreads.each('closeProvider', this.provider.onThread.key);
    services.log.info('queue', 'worker stopped');
  }
}
