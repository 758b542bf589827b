// A failure budget for guessed secrets (CONTRACT section 9's rule for SMTP AUTH, also applied to
// the admin token over HTTP): each failure from a client address is answered a little later than
// the one before, and past MAX_AUTH_FAILURES in a minute the address is refused outright until its
// failures age out of the window. Kept per relay in memory: it slows guessing, it is no ledger.

/** Failures an address may make in WINDOW_MS; past that it is refused. */
export const MAX_AUTH_FAILURES = 10;
const WINDOW_MS = 60_000;
/** Each recent failure adds this much to the next refusal, up to the cap: guessing gets slow. */
const DELAY_STEP_MS = 100;
const DELAY_CAP_MS = 1_000;
/** Addresses remembered at most; past it the oldest are forgotten (a flood of addresses cannot grow memory). */
const MAX_ADDRESSES = 10_000;

export class AuthFailures {
  private readonly failures = new Map<string, number[]>();

  constructor(private readonly nowMs: () => number) {}

  private recent(address: string): number[] {
    const since = this.nowMs() - WINDOW_MS;
    const kept = (this.failures.get(address) ?? []).filter((at) => at > since);
    if (kept.length === 0) this.failures.delete(address);
    else this.failures.set(address, kept);
    return kept;
  }

  /** Whether the address has used up its budget. */
  exhausted(address: string): boolean {
    return this.recent(address).length > MAX_AUTH_FAILURES;
  }

  /** Whole seconds (>= 1) until an exhausted address may try again, or undefined when it may now. */
  retryAfterSeconds(address: string): number | undefined {
    const kept = this.recent(address);
    if (kept.length <= MAX_AUTH_FAILURES) return undefined;
    // Back under the budget once all but MAX_AUTH_FAILURES of the failures have aged out.
    const freedAt = kept[kept.length - 1 - MAX_AUTH_FAILURES]! + WINDOW_MS;
    return Math.max(1, Math.ceil((freedAt - this.nowMs()) / 1000));
  }

  /** Records a failure; answers how long to wait before replying, and whether the budget is now used up. */
  record(address: string): { delayMs: number; exhausted: boolean } {
    const kept = this.recent(address);
    kept.push(this.nowMs());
    this.failures.delete(address);
    this.failures.set(address, kept);
    if (this.failures.size > MAX_ADDRESSES) this.failures.delete(this.failures.keys().next().value!);
    return { delayMs: Math.min(DELAY_CAP_MS, DELAY_STEP_MS * kept.length), exhausted: kept.length > MAX_AUTH_FAILURES };
  }
}
