// The delivery provider's account-level limits (specification section 8, quota rule 3): a
// recipient-weighted sending rate and a daily allowance. When either is reached the worker puts
// the job back in the queue for later instead of failing it. Both read the relay clock.
import { nextUtcDayStart, utcDay } from '../clock.js';
import type { DeliveryConfig } from '../config.js';

export class ProviderLimits {
  private readonly recent: Array<{ atMs: number; recipients: number }> = [];
  private day: string;

  constructor(
    private readonly config: Pick<DeliveryConfig, 'recipientsPerSecond' | 'dailyRecipients'>,
    private usedToday = 0,
    nowMs = Date.now(),
  ) {
    this.day = utcDay(nowMs);
  }

  /** Takes room for `recipients` now and returns 0, or returns when to try again (ms epoch). */
  reserve(recipients: number, nowMs: number): number {
    const today = utcDay(nowMs);
    if (today !== this.day) {
      this.day = today;
      this.usedToday = 0;
    }
    const { dailyRecipients, recipientsPerSecond } = this.config;
    // The first message of a day always goes, even one larger than the whole allowance.
    if (dailyRecipients > 0 && this.usedToday > 0 && this.usedToday + recipients > dailyRecipients) {
      return nextUtcDayStart(nowMs);
    }
    if (recipientsPerSecond > 0) {
      while (this.recent.length > 0 && this.recent[0]!.atMs <= nowMs - 1000) this.recent.shift();
      const inWindow = this.recent.reduce((sum, r) => sum + r.recipients, 0);
      // A message larger than the whole rate still goes out, alone in its second.
      if (inWindow > 0 && inWindow + recipients > recipientsPerSecond) return this.recent[0]!.atMs + 1000;
    }
    this.recent.push({ atMs: nowMs, recipients });
    this.usedToday += recipients;
    return 0;
  }
}
