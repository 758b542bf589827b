/**
 * A flag naming a time in the past (`recover --since`): ISO 8601, or a time ago as Stripe CLI and
 * Svix users write it (`30m`, `2h`, `1d`). The flag's value is read when the command line is parsed,
 * so a bad one is a usage error before anything is sent; a time ago is resolved when the command
 * runs, against the relay's clock (its test clock included).
 */
import { InvalidArgumentError } from 'commander';
import { UsageError } from './errors.js';

export type PastTime = { iso: string } | { agoSeconds: number; text: string };

const UNIT_SECONDS = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 } as const;
const AGO = /^(\d{1,9})([smhdw])$/;
// The relay checks the calendar and the zone of an ISO time (a 422 names what is wrong); this only
// tells an ISO time from a mistyped value.
const ISO_LIKE = /^\d{4}-\d{2}-\d{2}T/;

/** The forms a past time may take, for help texts and errors. */
export const PAST_TIME_FORMS = 'an ISO 8601 time with a zone (2026-11-27T09:00:00Z) or a time ago: a whole number and s, m, h, d or w (30m, 2h, 1d)';

/** A commander argument parser: the flag's value as a PastTime, or a usage error naming the forms. */
export function parsePastTime(value: string): PastTime {
  const ago = AGO.exec(value);
  if (ago) return { agoSeconds: Number(ago[1]) * UNIT_SECONDS[ago[2] as keyof typeof UNIT_SECONDS], text: value };
  if (ISO_LIKE.test(value)) return { iso: value };
  throw new InvalidArgumentError(`Give ${PAST_TIME_FORMS}.`);
}

/** The ISO time to send: an ISO value as given, a time ago counted back from `nowMs` (the relay's clock). */
export function resolvePastTime(time: PastTime, nowMs: number, flag: string): string {
  if ('iso' in time) return time.iso;
  const at = nowMs - time.agoSeconds * 1000;
  if (at < 0) throw new UsageError(`${flag} ${time.text} reaches back before 1970: give a shorter time ago or an ISO 8601 time`);
  return new Date(at).toISOString();
}

/** Whether resolving needs the relay's clock (a time ago was given). */
export function isTimeAgo(time: PastTime | undefined): boolean {
  return time !== undefined && 'agoSeconds' in time;
}
