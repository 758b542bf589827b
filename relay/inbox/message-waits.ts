// Waits for captured mail (GET /admin/v1/messages/wait, CONTRACT section 10): a wait answers at
// once with the newest match, else it is held until a matching message is captured. It is woken
// by the events that make the dashboard live (a capture here, a batch of inbox entries from any
// relay sharing the database: cluster-bus.ts forwards them), and a slow poll covers a notification
// lost in a reconnect. One round of matching serves every open wait: one query for what was
// captured since the last round, matched in memory, so 200 waits cost what one does.
import type { RelayBus } from '../bus.js';
import type { Logger } from '../log.js';
import type { Db } from '../storage/db.js';
import { capturedSeq, capturedSince, lastCapturedSeq, type SequencedSummary } from '../storage/captured.js';

export interface WaitFilter {
  /** An envelope recipient, compared case-insensitively. */
  to?: string;
  /** A case-insensitive substring of the decoded subject. */
  subject?: string;
  project?: string;
  /** Only messages captured after the one with this seq. */
  afterSeq?: number;
  /** A filter holds text no stored message can (a NUL): the wait can only time out. */
  matchesNothing?: boolean;
}

/** Why a wait ended without a message. */
export type WaitEnd = { id: string } | { ended: 'timeout' | 'aborted' | 'stopping' };

interface Waiter {
  filter: WaitFilter;
  /** The newest seq when the wait began: later captures are matched by rounds. */
  floor: number;
  settle(end: WaitEnd): void;
}

/** Rows a round reads at most per query; a longer backlog takes more queries. */
const ROUND_ROWS = 500;
/**
 * Seqs a round reads again below the newest it has seen: on PostgreSQL a message may commit after
 * one with a higher seq (another relay, another transaction), and it must not be skipped.
 */
const LATE_COMMIT_MARGIN = 200;
/** The backstop poll while waits are open (a NOTIFY lost in a reconnect only delays an answer). */
const POLL_MS = 2_000;
/** Pages the answer-at-once search reads when a subject filter is given (matched in memory). */
const AT_ONCE_PAGE = 500;

export function matchesWait(filter: WaitFilter, message: SequencedSummary): boolean {
  if (filter.matchesNothing) return false;
  if (filter.afterSeq !== undefined && message.seq <= filter.afterSeq) return false;
  if (filter.project !== undefined && message.project_id !== filter.project) return false;
  if (filter.to !== undefined) {
    const to = filter.to.toLowerCase();
    if (!message.to.some((address) => address.toLowerCase() === to)) return false;
  }
  if (filter.subject !== undefined && !(message.subject ?? '').toLowerCase().includes(filter.subject.toLowerCase())) return false;
  return true;
}

export class MessageWaits {
  private readonly waiters = new Set<Waiter>();
  private round: Promise<void> | undefined;
  private again = false;
  /** The newest seq a round has read. */
  private seen = 0;
  private poll: NodeJS.Timeout | undefined;
  private readonly wake = () => this.scheduleRound();

  // Its parts, not RelayServices: services.ts holds a MessageWaits.
  constructor(private readonly services: { db: Db; bus: RelayBus; log: Logger }) {
    for (const event of ['message.captured', 'inbox.captured', 'inbox.changed'] as const) services.bus.on(event, this.wake);
  }

  /** Open waits (tests check that abandoned ones are freed). */
  get size(): number {
    return this.waiters.size;
  }

  /** The seq of a captured message id, for `after`; undefined when there is none. */
  seqOf(id: string): Promise<number | undefined> {
    return capturedSeq(this.services.db, id);
  }

  /** Resolves with the matching message's id, or why none came. `signal` aborts (the client went away). */
  async wait(filter: WaitFilter, timeoutMs: number, signal: AbortSignal): Promise<WaitEnd> {
    if (signal.aborted) return { ended: 'aborted' };
    const floor = await lastCapturedSeq(this.services.db);
    let settled: (end: WaitEnd) => void = () => undefined;
    const done = new Promise<WaitEnd>((resolve) => {
      settled = resolve;
    });
    const timer = setTimeout(() => waiter.settle({ ended: 'timeout' }), timeoutMs);
    const onAbort = () => waiter.settle({ ended: 'aborted' });
    const waiter: Waiter = {
      filter,
      floor,
      settle: (end) => {
        if (!this.waiters.delete(waiter)) return;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        if (this.waiters.size === 0) this.stopPolling();
        settled(end);
      },
    };
    // Registered before the answer-at-once read, so a capture in between is matched by a round.
    this.waiters.add(waiter);
    signal.addEventListener('abort', onAbort, { once: true });
    this.startPolling();
    this.newestMatch(filter, floor).then(
      (id) => {
        if (id !== undefined) waiter.settle({ id });
      },
      (error: unknown) => this.services.log.error('inbox', 'cannot read captured mail for a wait', { error: (error as Error).message }),
    );
    return done;
  }

  /** Ends every open wait (the relay is stopping), so none holds the HTTP server open. */
  stop(): void {
    for (const event of ['message.captured', 'inbox.captured', 'inbox.changed'] as const) this.services.bus.off(event, this.wake);
    for (const waiter of [...this.waiters]) waiter.settle({ ended: 'stopping' });
    this.stopPolling();
  }

  /** The newest message up to `upTo` that matches, read newest first. */
  private async newestMatch(filter: WaitFilter, upTo: number): Promise<string | undefined> {
    if (filter.matchesNothing) return undefined;
    const { subject, matchesNothing: _, ...indexed } = filter;
    let below = upTo + 1;
    for (;;) {
      const page = await capturedSince(this.services.db, { ...indexed, beforeSeq: below, limit: subject === undefined ? 1 : AT_ONCE_PAGE }, 'desc');
      const match = page.find((m) => matchesWait(filter, m));
      if (match) return match.id;
      if (subject === undefined || page.length < AT_ONCE_PAGE) return undefined;
      below = page[page.length - 1]!.seq;
    }
  }

  private scheduleRound(): void {
    if (this.waiters.size === 0) return;
    if (this.round) {
      this.again = true;
      return;
    }
    this.round = this.runRound()
      .catch((error: unknown) => this.services.log.error('inbox', 'cannot match captured mail to waits', { error: (error as Error).message }))
      .finally(() => {
        this.round = undefined;
        if (this.again) {
          this.again = false;
          this.scheduleRound();
        }
      });
  }

  private async runRound(): Promise<void> {
    while (this.waiters.size > 0) {
      const lowestFloor = Math.min(...[...this.waiters].map((w) => w.floor));
      const from = Math.max(lowestFloor, this.seen - LATE_COMMIT_MARGIN);
      const rows = await capturedSince(this.services.db, { afterSeq: from, limit: ROUND_ROWS });
      for (const row of rows) this.seen = Math.max(this.seen, row.seq);
      for (const waiter of [...this.waiters]) {
        const match = rows.find((row) => row.seq > waiter.floor && matchesWait(waiter.filter, row));
        if (match) waiter.settle({ id: match.id });
      }
      if (rows.length < ROUND_ROWS) return;
      // A backlog: every open waiter has seen this page; the next query starts after it.
      for (const waiter of this.waiters) waiter.floor = Math.max(waiter.floor, rows[rows.length - 1]!.seq);
    }
  }

  private startPolling(): void {
    if (this.poll) return;
    this.poll = setInterval(this.wake, POLL_MS);
    this.poll.unref();
  }

  private stopPolling(): void {
    clearInterval(this.poll);
    this.poll = undefined;
  }
}
