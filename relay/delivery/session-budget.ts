// How many sessions toward one SMTP server the relay holds, counted across all its threads.
//
// Why: each worker thread keeps a session pool of its own (thread-delivery.ts), and the relay's own
// sink refuses the connections past its client limit (limits.smtpMaxClients) with 421, after which
// the email waits 30 s for a retry. Delivery concurrency into the sink is at most that limit, yet a
// thread that had no idle session of its own opened one while another thread held idle ones (and
// a session being reset or quitting is neither busy nor idle): the sink saw more clients than its
// limit. So the pools share a count in shared memory (a SharedArrayBuffer, the same memory on every
// thread the target is posted to): a session counts from just before it connects until its socket
// has closed, by when the server no longer counts it either (smtp-server forgets a connection at
// QUIT or when its socket closes).
//
// A pool that needs a session when the count is full waits and says so (WAITING); a pool holding an
// idle session closes one for each waiter (YIELDING counts those being closed, so two pools do not
// both close one for the same waiter).

const OPEN = 0;
const WAITING = 1;
const YIELDING = 2;

/** Structured-clonable: posted to a thread, `cells` is the same memory there. */
export interface SessionBudget {
  cells: Int32Array;
  limit: number;
}

// Atomics.waitAsync (node 16+) is typed in TypeScript's ES2024 library, past the ES2023 one this
// project compiles against.
type WaitAsync = (cells: Int32Array, index: number, value: number, timeoutMs?: number) => { async: boolean; value: unknown };
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;

export function sessionBudget(limit: number): SessionBudget {
  return { cells: new Int32Array(new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT)), limit };
}

/** Counts a new session if there is room for it. */
export function tryTake(budget: SessionBudget): boolean {
  const { cells, limit } = budget;
  for (let open = Atomics.load(cells, OPEN); open < limit; ) {
    const seen = Atomics.compareExchange(cells, OPEN, open, open + 1);
    if (seen === open) return true;
    open = seen;
  }
  return false;
}

/** Counts a new session whether or not there is room (a waiter that waited its longest). */
export function takeOver(budget: SessionBudget): void {
  Atomics.add(budget.cells, OPEN, 1);
}

/** A counted session's socket has closed; `yielded` when it was closed for a waiter. */
export function giveBack(budget: SessionBudget, yielded: boolean): void {
  if (yielded) Atomics.sub(budget.cells, YIELDING, 1);
  Atomics.sub(budget.cells, OPEN, 1);
  Atomics.notify(budget.cells, OPEN);
}

/**
 * Waits, counted as a waiter, until the count may have room (a counted session closed), `local`
 * settles (a session of the caller's own pool came free), or `maxMs` has passed. The caller then
 * tries again.
 */
export async function waitForRoom(budget: SessionBudget, local: Promise<void>, maxMs: number): Promise<void> {
  const { cells } = budget;
  const open = Atomics.load(cells, OPEN);
  if (open < budget.limit) return;
  Atomics.add(cells, WAITING, 1);
  Atomics.notify(cells, WAITING);
  try {
    const waited = waitAsync(cells, OPEN, open, Math.max(0, maxMs));
    if (waited.async) await Promise.race([waited.value, local]);
  } finally {
    Atomics.sub(cells, WAITING, 1);
  }
}

/** Claims a waiter to close an idle session for; false when every waiter is already being served. */
export function claimYield(budget: SessionBudget): boolean {
  const { cells } = budget;
  for (;;) {
    const yielding = Atomics.load(cells, YIELDING);
    if (yielding >= Atomics.load(cells, WAITING)) return false;
    if (Atomics.compareExchange(cells, YIELDING, yielding, yielding + 1) === yielding) return true;
  }
}

/** How many pools wait for room now (the value waitersChange watches). */
export function waiters(budget: SessionBudget): number {
  return Atomics.load(budget.cells, WAITING);
}

/** Settles once a pool has started waiting since `waiters` read `seen` (at once if one already has). */
export async function waitersChange(budget: SessionBudget, seen: number): Promise<void> {
  const waited = waitAsync(budget.cells, WAITING, seen);
  if (waited.async) await waited.value;
}

/** Wakes every pool watching for waiters (one closing stops watching). */
export function wakeWatchers(budget: SessionBudget): void {
  Atomics.notify(budget.cells, WAITING);
}
