// The dashboard's email log: a project's emails (the public read API's list and detail, as an
// email:read key of that project sees them, each with how it came in: API or SMTP) plus the webhook deliveries each event caused; daily
// sends for the usage chart; and resending one webhook delivery now.
import type { KeyPrincipal } from '../domain/auth.js';
import { getEmail, listEmails, parseListQuery } from '../domain/reads.js';
import { ApiError, validationError } from '../errors.js';
import type { RelayServices } from '../services.js';
import { dailySends, deliveriesOfEmail, findProject, projectOfEmail, resendDeliveryNow, sourceOfEmail, submittedAmong, workspaceExists } from '../storage/email-log.js';
import { utcDay } from '../clock.js';
import { listDeliveryAttempts } from '../storage/delivery-attempts.js';
import { deliveryState, retryEmailNow, setDeliveryPaused } from '../domain/delivery-control.js';
import { adminBody, param as p } from './route-helpers.js';
import { reputation } from '../domain/reputation.js';
import type { Handler } from './router.js';

const CHART_DAYS = 30;
const DAY_MS = 24 * 60 * 60 * 1000;

/** The admin reads a project's emails as an email:read key of it would. */
async function projectReader(s: RelayServices, projectId: string): Promise<KeyPrincipal> {
  const project = await findProject(s.db, projectId);
  if (!project) throw new ApiError('not_found', `No project ${projectId}.`);
  const testMode = project.environment === 'development';
  return { keyId: '', projectId, workspaceId: project.workspace_id, prefix: testMode ? 'rr_test_' : 'rr_live_', permission: 'email:read', testMode };
}

export function adminEmailHandlers(s: RelayServices) {
  return {
    listProjectEmails: async (ctx) => {
      const reader = await projectReader(s, p(ctx, 'project_id'));
      const page = await listEmails(s.db, reader, parseListQuery(ctx.url.searchParams));
      const submitted = await submittedAmong(s.db, page.emails.map((e) => e.id));
      const emails = page.emails.map((e) => ({ ...e, source: submitted.has(e.id) ? 'smtp' : 'api' }));
      return { status: 200, body: { emails, next_cursor: page.next_cursor } };
    },
    getEmail: async (ctx) => {
      const emailId = p(ctx, 'email_id');
      const projectId = await projectOfEmail(s.db, emailId);
      if (!projectId) throw new ApiError('not_found', `No email ${emailId}.`);
      const [email, source, deliveries] = await Promise.all([
        getEmail(s.db, await projectReader(s, projectId), emailId),
        sourceOfEmail(s.db, emailId),
        deliveriesOfEmail(s.db, emailId),
      ]);
      return { status: 200, body: { email, project_id: projectId, source, deliveries } };
    },
    deliveryAttempts: async (ctx) => {
      const emailId = p(ctx, 'email_id');
      if (!(await projectOfEmail(s.db, emailId))) throw new ApiError('not_found', `No email ${emailId}.`);
      const rows = await listDeliveryAttempts(s.db, emailId);
      const attempts = rows.map((r) => ({
        recipient: r.recipient,
        attempt: r.attempt,
        started_at: r.started_at,
        provider: r.provider,
        host: r.host,
        port: r.port,
        tls: r.tls === 1,
        tls_version: r.tls_version,
        certificate_verified: r.certificate_verified === null ? null : r.certificate_verified === 1,
        outcome: r.outcome,
        reply: r.reply,
        transcript: JSON.parse(r.transcript_json) as unknown[],
        next_attempt_at: r.next_attempt_at,
      }));
      return { status: 200, body: { attempts } };
    },
    retryNow: async (ctx) => ({ status: 200, body: await retryEmailNow(s, p(ctx, 'email_id'), await adminBody(ctx)) }),
    deliveryState: async (ctx) => ({ status: 200, body: await deliveryState(s, p(ctx, 'project_id')) }),
    pauseDelivery: async (ctx) => ({ status: 200, body: await setDeliveryPaused(s, p(ctx, 'project_id'), true) }),
    resumeDelivery: async (ctx) => ({ status: 200, body: await setDeliveryPaused(s, p(ctx, 'project_id'), false) }),
    reputation: async (ctx) => {
      const workspaceId = p(ctx, 'workspace_id');
      if (!(await workspaceExists(s.db, workspaceId))) throw new ApiError('not_found', `No workspace ${workspaceId}.`);
      const [own] = await reputation(s, workspaceId);
      return { status: 200, body: { workspace_id: workspaceId, windows: own!.windows, projects: own!.projects } };
    },
    dailyUsage: async (ctx) => {
      const workspaceId = p(ctx, 'workspace_id');
      if (!(await workspaceExists(s.db, workspaceId))) throw new ApiError('not_found', `No workspace ${workspaceId}.`);
      const today = Date.parse(`${utcDay(s.clock.nowMs())}T00:00:00.000Z`);
      const first = today - (CHART_DAYS - 1) * DAY_MS;
      const counts = await dailySends(s.db, workspaceId, new Date(first).toISOString());
      const days = Array.from({ length: CHART_DAYS }, (_, i) => {
        const date = new Date(first + i * DAY_MS).toISOString().slice(0, 10);
        return { date, emails: counts.get(date) ?? 0 };
      });
      return { status: 200, body: { days } };
    },
    resendDelivery: async (ctx) => {
      const raw = await ctx.readBody(1024);
      if (raw.length > 0) throw validationError([{ field: 'body', message: 'must be empty' }]);
      const found = await s.db.write((tx) => resendDeliveryNow(tx, p(ctx, 'webhook_id'), p(ctx, 'event_id'), s.clock.iso()));
      if (!found) throw new ApiError('not_found', `No delivery of event ${p(ctx, 'event_id')} to webhook ${p(ctx, 'webhook_id')}.`);
      s.bus.emit('webhooks.ready');
      return { status: 202, body: { webhook_id: p(ctx, 'webhook_id'), event_id: p(ctx, 'event_id'), state: 'pending' } };
    },
  } satisfies Record<string, Handler>;
}
