// The one clock every time rule reads: rate windows, quota months, webhook schedules, retention,
// webhook timestamps. With --test-clock it is real time plus an offset that advance() grows and
// that the caller persists; network time-outs stay in real time and do not read this clock.
import { EventEmitter } from 'node:events';

export class Clock extends EventEmitter {
  constructor(
    private offsetMs = 0,
    readonly adjustable = false,
  ) {
    super();
  }

  nowMs(): number {
    return Date.now() + this.offsetMs;
  }

  now(): Date {
    return new Date(this.nowMs());
  }

  iso(): string {
    return this.now().toISOString();
  }

  unix(): number {
    return Math.floor(this.nowMs() / 1000);
  }

  get offset(): number {
    return this.offsetMs;
  }

  /** Takes the offset another relay on the same database stored; moving forward wakes listeners. */
  setOffset(offsetMs: number): void {
    if (!this.adjustable || offsetMs <= this.offsetMs) return;
    const seconds = (offsetMs - this.offsetMs) / 1000;
    this.offsetMs = offsetMs;
    this.emit('advanced', seconds);
  }

  /** Moves the test clock forward; listeners (the worker, the webhook dispatcher) wake up. */
  advance(seconds: number): void {
    if (!this.adjustable) throw new Error('the clock is not adjustable without --test-clock');
    this.offsetMs += seconds * 1000;
    this.emit('advanced', seconds);
  }
}

/** `2026-11` for the UTC month containing ms. */
export function utcMonth(ms: number): string {
  return new Date(ms).toISOString().slice(0, 7);
}

/** Milliseconds of the start of the next UTC month after ms. */
export function nextUtcMonthStart(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/** `2026-11-22` for the UTC day containing ms. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Milliseconds of the start of the next UTC day after ms. */
export function nextUtcDayStart(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
}
