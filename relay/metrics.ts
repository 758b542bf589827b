// Prometheus counters kept in memory since the relay started (standard counter semantics: a
// restart resets them, Prometheus' rate() copes). Gauges are read from the database by
// http/ops.ts. Labels take a few fixed values each, never ids or addresses.
import type { DeliveryResult, RecipientOutcome } from './mail/delivery-result.js';

const COUNTERS = {
  raven_admissions_total: {
    help: 'Answers to POST /v1/emails: accepted (202), suppressed (200), replayed (idempotent repeat), rejected (an error); aborted: the client hung up or broke the chunked encoding before its body ended.',
    initial: [{ result: 'accepted' }, { result: 'suppressed' }, { result: 'replayed' }, { result: 'rejected' }, { result: 'aborted' }],
  },
  raven_admission_rejections_total: {
    help: 'Refused POST /v1/emails requests by error code.',
    initial: [],
  },
  raven_submissions_total: {
    help: 'Messages submitted over SMTP (the final dot): accepted (queued), suppressed, replayed (idempotent repeat), rejected (an error).',
    initial: [{ result: 'accepted' }, { result: 'suppressed' }, { result: 'replayed' }, { result: 'rejected' }],
  },
  raven_submission_rejections_total: {
    help: 'Refused SMTP submissions by API error code.',
    initial: [],
  },
  raven_deliveries_total: {
    help: 'Delivery attempt outcomes, one per recipient and attempt.',
    initial: ['delivered', 'sent', 'bounced', 'deferred', 'failed', 'unknown'].map((outcome) => ({ outcome })),
  },
  raven_reports_total: {
    help: 'Mail received at the raven. MX: delivery status notifications (dsn) and feedback reports (arf) applied to a known email, about an unknown one, or refused as no report.',
    initial: [
      { kind: 'dsn', result: 'applied' },
      { kind: 'arf', result: 'applied' },
      { kind: 'dsn', result: 'unknown_email' },
      { kind: 'arf', result: 'unknown_email' },
      { kind: 'none', result: 'refused' },
    ],
  },
  raven_delivery_pacing_seconds_total: {
    help: "Seconds the delivery worker spent at each in-flight limit: full (its concurrency), burst (8: admissions waiting, clients first), behind (32: a burst the queue fell behind), saturated (2: a burst that saturates the relay); read as a share of the time, e.g. rate() over a minute.",
    initial: ['full', 'burst', 'behind', 'saturated'].map((mode) => ({ mode })),
  },
  raven_webhook_attempts_total: {
    help: 'Webhook POST attempts: success (a 2xx answer) or failure.',
    initial: [{ result: 'success' }, { result: 'failure' }],
  },
} satisfies Record<string, { help: string; initial: Array<Record<string, string>> }>;

export type CounterName = keyof typeof COUNTERS;
export type Labels = Record<string, string>;

const escapeLabel = (value: string) => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

function labelText(labels: Labels): string {
  const pairs = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  return pairs.length === 0 ? '' : `{${pairs.join(',')}}`;
}

export class Metrics {
  private readonly series = new Map<CounterName, Map<string, number>>();

  constructor() {
    for (const [name, def] of Object.entries(COUNTERS) as Array<[CounterName, (typeof COUNTERS)[CounterName]]>) {
      this.series.set(name, new Map(def.initial.map((labels: Labels) => [labelText(labels), 0])));
    }
  }

  inc(name: CounterName, labels: Labels = {}, by = 1): void {
    const values = this.series.get(name)!;
    const key = labelText(labels);
    values.set(key, (values.get(key) ?? 0) + by);
  }

  /** The counters in the text exposition format, one line each. */
  render(): string[] {
    return [...this.series].flatMap(([name, values]) => [
      `# HELP ${name} ${COUNTERS[name].help}`,
      `# TYPE ${name} counter`,
      ...[...values].map(([labels, value]) => `${name}${labels} ${value}`),
    ]);
  }
}

const OUTCOME_LABEL: Record<Exclude<RecipientOutcome, 'accepted'>, string> = {
  deferred: 'deferred',
  bounced: 'bounced',
  rejected: 'failed',
  unknown: 'unknown',
};

/** Counts one delivery attempt's per-recipient outcomes; an accepted one is `delivered` by the sink, `sent` upstream. */
export function countDeliveryResult(metrics: Metrics, result: DeliveryResult, accepted: 'delivered' | 'sent'): void {
  for (const r of result.recipients) {
    metrics.inc('raven_deliveries_total', { outcome: r.outcome === 'accepted' ? accepted : OUTCOME_LABEL[r.outcome] });
  }
}
