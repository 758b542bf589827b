// Whether the SMTP sink is busy capturing, for the inbox's background work to yield to it (issues
// 24 and 26): the indexer writes its entries in batches while mail streams in, and the checks
// badges wait for a quiet sink. A client waits for each 250; an inbox entry or a badge can wait.
//
// The sink counts each message from the end of its DATA to its answer (`begin`/`end`). The sink is
// quiet when no message is in flight and none ended in the last `quietMs` (real time, not the
// relay's test clock: this is about sharing the CPU, not about mail's dates). A few connections
// sending back to back leave gaps between their messages far shorter than that.

export interface CaptureActivityOptions {
  /** How long after the last capture the sink counts as quiet. */
  quietMs?: number;
}

const DEFAULT_QUIET_MS = 25;

interface Waiter {
  resolve: () => void;
  timer: NodeJS.Timeout | undefined;
}

export class CaptureActivity {
  private inFlight = 0;
  private lastEnd = -Infinity;
  private readonly waiters = new Set<Waiter>();
  private check: NodeJS.Timeout | undefined;
  private readonly quietMs: number;

  constructor(options: CaptureActivityOptions = {}) {
    this.quietMs = options.quietMs ?? DEFAULT_QUIET_MS;
  }

  /** A message's capture started (its data is in; its commit and answer are ahead). */
  begin(): void {
    this.inFlight += 1;
  }

  /** Its capture ended (answered, or refused). */
  end(): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    this.lastEnd = performance.now();
    if (this.inFlight === 0) this.armCheck(this.quietMs);
  }

  /** True while a capture is in flight or one ended less than `quietMs` ago. */
  get busy(): boolean {
    return this.inFlight > 0 || performance.now() - this.lastEnd < this.quietMs;
  }

  /**
   * Resolves once the sink is quiet, or after `maxWaitMs` at the latest (the bound that keeps
   * background work going, at its own pace, while mail never stops coming), or when `signal`
   * aborts (its owner is stopping).
   */
  whenQuiet(maxWaitMs = Infinity, signal?: AbortSignal): Promise<void> {
    if (!this.busy || signal?.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const waiter: Waiter = {
        resolve: () => {
          if (!this.waiters.delete(waiter)) return;
          if (waiter.timer) clearTimeout(waiter.timer);
          signal?.removeEventListener('abort', waiter.resolve);
          resolve();
        },
        timer: undefined,
      };
      if (Number.isFinite(maxWaitMs)) waiter.timer = setTimeout(waiter.resolve, Math.max(0, maxWaitMs));
      signal?.addEventListener('abort', waiter.resolve, { once: true });
      this.waiters.add(waiter);
      if (this.inFlight === 0) this.armCheck(this.quietMs - (performance.now() - this.lastEnd));
    });
  }

  /** Once the quiet time has passed, lets the waiters go if nothing began or ended meanwhile. */
  private armCheck(afterMs: number): void {
    if (this.waiters.size === 0) return;
    if (this.check) clearTimeout(this.check);
    this.check = setTimeout(() => {
      this.check = undefined;
      if (this.inFlight > 0) return; // the next end() arms it again
      const left = this.quietMs - (performance.now() - this.lastEnd);
      if (left > 0) return this.armCheck(left);
      for (const waiter of [...this.waiters]) waiter.resolve();
    }, Math.max(0, afterMs));
  }
}
