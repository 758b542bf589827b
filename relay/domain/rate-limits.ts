// Accepted-request rate limits over sliding windows (CONTRACT section 2, check 7). Only admitted
// results count; the check and the record happen inside the admission's write, which the single
// writer runs one at a time, so concurrent requests cannot slip past a limit together.
//
// On PostgreSQL several relays admit at once, so the hits live in the database: the admission
// locks the scopes, adopts what the database holds for them (adopt), decides, and writes the hits
// it recorded (drainRecorded) in the same transaction.
import type { LimitsConfig } from '../config.js';
import type { KeyPrincipal } from './auth.js';

export interface Window {
  scope: string;
  limit: number;
  windowMs: number;
  label: string;
}

export interface RateDecision {
  retryAfter: number;
  label: string;
}

export class RateLimiter {
  private readonly hits = new Map<string, number[]>();

  constructor(private readonly limits: LimitsConfig) {}

  private readonly recorded: Array<{ scope: string; atMs: number }> = [];
  /** Set by the first adopt(): the hits are kept in a shared store as well. */
  private shared = false;

  /** The windows a key's admissions count against. */
  windows(key: KeyPrincipal): Window[] {
    const windows: Window[] = [
      { scope: `key:${key.keyId}`, limit: this.limits.keyPerSecond, windowMs: 1000, label: `${this.limits.keyPerSecond} per second for this key` },
      {
        scope: `ws:${key.workspaceId}`,
        limit: this.limits.workspacePerSecond,
        windowMs: 1000,
        label: `${this.limits.workspacePerSecond} per second for this workspace`,
      },
    ];
    if (key.testMode) {
      windows.push({
        scope: `test:${key.keyId}`,
        limit: this.limits.testKeyPerMinute,
        windowMs: 60_000,
        label: `${this.limits.testKeyPerMinute} per minute for a development key`,
      });
    }
    return windows;
  }

  private recent(scope: string, windowMs: number, nowMs: number): number[] {
    const list = this.hits.get(scope) ?? [];
    let drop = 0;
    while (drop < list.length && list[drop]! <= nowMs - windowMs) drop++;
    if (drop > 0) list.splice(0, drop);
    this.hits.set(scope, list);
    return list;
  }

  /** The most restrictive window that is full, or null when the request may be admitted. */
  check(key: KeyPrincipal, nowMs: number): RateDecision | null {
    let worst: RateDecision | null = null;
    for (const w of this.windows(key)) {
      if (w.limit <= 0) continue;
      const list = this.recent(w.scope, w.windowMs, nowMs);
      if (list.length < w.limit) continue;
      // Free again when the hit that fills the window slides out of it.
      const freeAt = list[list.length - w.limit]! + w.windowMs;
      const retryAfter = Math.max(1, Math.ceil((freeAt - nowMs) / 1000));
      if (!worst || retryAfter > worst.retryAfter) worst = { retryAfter, label: w.label };
    }
    return worst;
  }

  record(key: KeyPrincipal, nowMs: number): void {
    for (const w of this.windows(key)) {
      const list = this.hits.get(w.scope) ?? [];
      list.push(nowMs);
      this.hits.set(w.scope, list);
      if (this.shared) this.recorded.push({ scope: w.scope, atMs: nowMs });
    }
  }

  /** Takes the hits another store holds for a scope (oldest first) in place of this one's. */
  adopt(scope: string, hits: number[]): void {
    this.shared = true;
    this.hits.set(scope, hits);
  }

  /** The hits recorded since the last call, for a shared store; forgotten here. */
  drainRecorded(): Array<{ scope: string; atMs: number }> {
    return this.recorded.splice(0, this.recorded.length);
  }
}
