// Operations endpoints, without authentication: liveness, readiness, Prometheus metrics (gauges
// read from the database, counters from relay/metrics.ts).
import { ApiError } from '../errors.js';
import type { RelayServices } from '../services.js';
import { gauges, ping } from '../storage/ops.js';
import { recentReputation, type WorkspaceReputation } from '../domain/reputation.js';
import type { Handler } from './router.js';

export function opsHandlers(s: RelayServices) {
  const rates = recentReputation(s);
  return {
    livez: async () => ({ status: 200, body: { status: 'ok' } }),
    readyz: async () => {
      const checks = { ...s.health };
      if (checks.database) {
        checks.database = await ping(s.db).then(() => true, () => false);
      }
      // Not ready is a 503 like any other: the contract's error body (CONTRACT section 1), naming what is down.
      const down = Object.entries(checks).flatMap(([name, up]) => (up ? [] : [name]));
      if (down.length > 0) {
        throw new ApiError('service_unavailable', `Not ready: ${down.join(', ')} ${down.length === 1 ? 'is' : 'are'} not up; retry after 1 second.`, { retryAfter: 1 });
      }
      return { status: 200, body: { status: 'ok', checks } };
    },
    metrics: async () => ({
      status: 200,
      raw: { contentType: 'text/plain; version=0.0.4; charset=utf-8', data: await renderMetrics(s, rates) },
    }),
  } satisfies Record<string, Handler>;
}

async function renderMetrics(s: RelayServices, recent: () => Promise<WorkspaceReputation[]>): Promise<string> {
  const [{ jobs, emails, webhookDeliveries: deliveries, domains }, workspaces] = await Promise.all([gauges(s.db), recent()]);
  // Per workspace (no project label) and per project, each window: sent in the last 1, 7 or 30 days
  // (read at most once a minute: REPUTATION_METRICS_MAX_AGE_MS).
  const rates = (metric: 'bounce_rate' | 'complaint_rate') =>
    workspaces.flatMap((w) => [
      ...w.windows.map((win) => `raven_${metric}{workspace="${w.workspace_id}",window="${win.days}d"} ${win[metric]}`),
      ...w.projects.flatMap((p) => p.windows.map((win) => `raven_${metric}{workspace="${w.workspace_id}",project="${p.project_id}",window="${win.days}d"} ${win[metric]}`)),
    ]);
  const lines = [
    '# HELP raven_queue_jobs Delivery jobs by state.',
    '# TYPE raven_queue_jobs gauge',
    ...jobs.map((r) => `raven_queue_jobs{state="${r.state}"} ${r.n}`),
    '# HELP raven_emails Stored emails by status.',
    '# TYPE raven_emails gauge',
    ...emails.map((r) => `raven_emails{status="${r.status}"} ${r.n}`),
    '# HELP raven_webhook_deliveries Webhook deliveries by state.',
    '# TYPE raven_webhook_deliveries gauge',
    ...deliveries.map((r) => `raven_webhook_deliveries{state="${r.state}"} ${r.n}`),
    '# HELP raven_domains Connected domains by status (pending ones are rechecked periodically).',
    '# TYPE raven_domains gauge',
    ...domains.map((r) => `raven_domains{status="${r.status}"} ${r.n}`),
    '# HELP raven_bounce_rate Bounced share of the recipients that reached the provider (review at 0.05, at risk at 0.1); read at most once a minute.',
    '# TYPE raven_bounce_rate gauge',
    ...rates('bounce_rate'),
    '# HELP raven_complaint_rate Complained share of the recipients that reached the provider (review at 0.001, at risk at 0.005); read at most once a minute.',
    '# TYPE raven_complaint_rate gauge',
    ...rates('complaint_rate'),
    '# HELP raven_message_waits Open waits for captured mail (GET /admin/v1/messages/wait) on this relay.',
    '# TYPE raven_message_waits gauge',
    `raven_message_waits ${s.messageWaits.size}`,
    '# HELP raven_up Whether the relay is running.',
    '# TYPE raven_up gauge',
    'raven_up 1',
    ...s.metrics.render(),
  ];
  return `${lines.join('\n')}\n`;
}
