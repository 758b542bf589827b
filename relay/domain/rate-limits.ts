// Accepted-request rate limits over sliding windows (CONTRACT section 2, check 7). Only admitted
// results count; the check and the record happen inside the admission's write.
//
// A window's hits are kept as entries: a time and how many hits stand at it. On SQLite the
// limiter's memory is the store (one relay owns the file and its single writer runs one batch at
// a time); each admission is its own entry, to the millisecond. On PostgreSQL several relays
// admit at once and the windows live in the database (storage/counters.ts): a batch adopts what
// the database holds for its scopes, decides, and charges its hits in one conditional statement
// that refuses the whole charge if another relay filled a window meanwhile. There an entry
// stands for every hit of a 1/50th of its window at the time of its latest one, so a window is
// never passed, and a hit leaves it at most 2 % of the window later than it might.
//
// Every entry inside the window counts, and so does any later one (a batch of another relay
// that read its clock a moment after this one): a hit at t then never fills any window holding t,
// whichever order the relays commit in.
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

/** Hits of a window standing at one time. */
export interface RateEntry {
  atMs: number;
  hits: number;
}

interface Held {
  /**
   * Oldest first from `first` on (an entry recorded out of order lingers until those before it go:
   * counted longer, never less). Entries before `first` have slid out; they are cut off only now and
   * then, not by a splice per request, which moved the whole window's entries every time (a
   * window of a busy key holds one entry per millisecond).
   */
  entries: RateEntry[];
  first: number;
  total: number;
}

/** Slid-out entries are cut off once there are this many and they are half the array. */
const COMPACT_AT = 256;

export class RateLimiter {
  private readonly scopes = new Map<string, Held>();
  /** Hits recorded since drainRecorded(), per scope. */
  private readonly recorded = new Map<string, number>();

  constructor(private readonly limits: LimitsConfig) {}

  /** The windows a key's admissions count against (a limit of 0 holds nothing). */
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
    return windows.filter((w) => w.limit > 0);
  }

  /** The scope's entries that still count at nowMs (older ones are forgotten). */
  private live(scope: string, windowMs: number, nowMs: number): Held {
    let held = this.scopes.get(scope);
    if (!held) this.scopes.set(scope, (held = { entries: [], first: 0, total: 0 }));
    const { entries } = held;
    let first = held.first;
    while (first < entries.length && entries[first]!.atMs <= nowMs - windowMs) held.total -= entries[first++]!.hits;
    if (first >= COMPACT_AT && first * 2 >= entries.length) {
      held.entries = entries.slice(first);
      first = 0;
    }
    held.first = first;
    return held;
  }

  /** The most restrictive window that is full, or null when the request may be admitted. */
  check(key: KeyPrincipal, nowMs: number): RateDecision | null {
    let worst: RateDecision | null = null;
    for (const w of this.windows(key)) {
      const held = this.live(w.scope, w.windowMs, nowMs);
      if (held.total < w.limit) continue;
      // Free again when enough of the oldest entries have slid out for one more hit.
      let counted = held.total;
      let freeAt = nowMs;
      for (let i = held.first; i < held.entries.length; i++) {
        const e = held.entries[i]!;
        if (counted < w.limit) break;
        counted -= e.hits;
        freeAt = e.atMs + w.windowMs;
      }
      const retryAfter = Math.max(1, Math.ceil((freeAt - nowMs) / 1000));
      if (!worst || retryAfter > worst.retryAfter) worst = { retryAfter, label: w.label };
    }
    return worst;
  }

  record(key: KeyPrincipal, nowMs: number): void {
    for (const w of this.windows(key)) {
      const held = this.live(w.scope, w.windowMs, nowMs);
      const last = held.entries.length > held.first ? held.entries[held.entries.length - 1] : undefined;
      if (last !== undefined && last.atMs === nowMs) last.hits++;
      else held.entries.push({ atMs: nowMs, hits: 1 });
      held.total++;
      this.recorded.set(w.scope, (this.recorded.get(w.scope) ?? 0) + 1);
    }
  }

  /** Takes the entries another store holds for a scope in place of this one's. */
  adopt(scope: string, entries: readonly RateEntry[]): void {
    const sorted = entries.map((e) => ({ ...e })).sort((a, b) => a.atMs - b.atMs);
    this.scopes.set(scope, { entries: sorted, first: 0, total: sorted.reduce((n, e) => n + e.hits, 0) });
  }

  /** The hits recorded per scope since the last call (what a shared store is charged). */
  drainRecorded(): Map<string, number> {
    const drained = new Map(this.recorded);
    this.recorded.clear();
    return drained;
  }
}
