// The whole route table: every path the relay's HTTP port answers, who may call it, and what
// answers it. Who: `key` an API key (Authorization: Bearer rr_...), `admin` the admin token or a
// dashboard session, `open` anyone. WebSocket endpoints are `upgrade` entries; a plain request to
// one is 404 (openapi.yaml, /v1/listen).
import type { InboxLive } from '../dashboard/inbox-live.js';
import type { RelayServices } from '../services.js';
import type { ListenHub } from '../webhooks/listen-hub.js';
import { adminHandlers } from './admin.js';
import { adminEmailHandlers } from './admin-emails.js';
import { adminInboxHandlers } from './admin-inbox.js';
import { adminMessageHandlers } from './admin-messages.js';
import { adminSessionHandlers } from './admin-session.js';
import { adminSubmissionHandlers, type SubmissionEndpoint } from './admin-submission.js';
import { adminWebhookHandlers } from './admin-webhooks.js';
import { dashboardHandlers } from './dashboard.js';
import { countAdmissions, emailHandlers } from './emails.js';
import { opsHandlers } from './ops.js';
import { withAdmin, withApiKey, withoutAuth, type KeyHandler } from './route-helpers.js';
import type { Handler, Method, Route, UpgradeHandler } from './router.js';

/** The endpoints that take a connection over as a WebSocket. */
export interface SocketEndpoints {
  listenHub: Pick<ListenHub, 'upgrade'>;
  inboxLive: Pick<InboxLive, 'upgrade'>;
}

export function buildRoutes(s: RelayServices, sockets: SocketEndpoints, submission: SubmissionEndpoint): Route[] {
  const key = (handler: KeyHandler) => withApiKey(s, handler);
  const admin = (handler: Handler) => withAdmin(s, handler);
  const open = (handler: Handler) => withoutAuth(handler);
  const route = (method: Method, path: string, handler: Handler): Route => ({ method, path, handler });
  const upgrade = (path: string, handler: UpgradeHandler): Route => ({ method: 'GET', path, upgrade: handler });

  const ops = opsHandlers(s);
  const emails = emailHandlers(s);
  const tenancy = adminHandlers(s);
  const webhooks = adminWebhookHandlers(s);
  const emailLog = adminEmailHandlers(s);
  const messages = adminMessageHandlers(s);
  const inbox = adminInboxHandlers(s);
  const session = adminSessionHandlers(s);
  const dashboard = dashboardHandlers(s);

  return [
    // Operations (CONTRACT section 5).
    route('GET', '/livez', open(ops.livez)),
    route('GET', '/readyz', open(ops.readyz)),
    route('GET', '/metrics', open(ops.metrics)),

    // The public API (specification section 2).
    route('POST', '/v1/emails', countAdmissions(s.metrics, key(emails.send))),
    route('GET', '/v1/emails', key(emails.list)),
    route('GET', '/v1/emails/:email_id', key(emails.get)),
    route('GET', '/v1/domains', key(emails.domains)),
    upgrade('/v1/listen', sockets.listenHub.upgrade),

    // The dashboard's operations (CONTRACT section 6): tenancy.
    route('POST', '/admin/v1/workspaces', admin(tenancy.createWorkspace)),
    route('GET', '/admin/v1/workspaces', admin(tenancy.listWorkspaces)),
    route('POST', '/admin/v1/workspaces/:workspace_id/activate', admin(tenancy.activateWorkspace)),
    route('POST', '/admin/v1/workspaces/:workspace_id/projects', admin(tenancy.createProject)),
    route('GET', '/admin/v1/workspaces/:workspace_id/projects', admin(tenancy.listProjects)),
    route('POST', '/admin/v1/projects/:project_id/domains', admin(tenancy.connectDomain)),
    route('GET', '/admin/v1/projects/:project_id/domains', admin(tenancy.listDomains)),
    route('POST', '/admin/v1/domains/:domain_id/verify', admin(tenancy.verifyDomain)),
    route('POST', '/admin/v1/projects/:project_id/keys', admin(tenancy.createKey)),
    route('GET', '/admin/v1/projects/:project_id/keys', admin(tenancy.listKeys)),
    route('DELETE', '/admin/v1/keys/:key_id', admin(tenancy.revokeKey)),
    route('GET', '/admin/v1/workspaces/:workspace_id/suppressions', admin(tenancy.listSuppressions)),
    route('POST', '/admin/v1/workspaces/:workspace_id/suppressions', admin(tenancy.addSuppression)),
    route('DELETE', '/admin/v1/workspaces/:workspace_id/suppressions/:email', admin(tenancy.removeSuppression)),
    route('GET', '/admin/v1/workspaces/:workspace_id/usage', admin(tenancy.usage)),
    route('GET', '/admin/v1/workspaces/:workspace_id/usage/daily', admin(emailLog.dailyUsage)),
    route('GET', '/admin/v1/workspaces/:workspace_id/reputation', admin(emailLog.reputation)),

    // Webhook endpoints and their deliveries.
    route('POST', '/admin/v1/projects/:project_id/webhooks', admin(webhooks.create)),
    route('GET', '/admin/v1/projects/:project_id/webhooks', admin(webhooks.list)),
    route('DELETE', '/admin/v1/webhooks/:webhook_id', admin(webhooks.delete)),
    route('GET', '/admin/v1/webhooks/:webhook_id/deliveries', admin(webhooks.deliveries)),
    route('POST', '/admin/v1/webhooks/:webhook_id/rotate-secret', admin(webhooks.rotateSecret)),
    route('POST', '/admin/v1/webhooks/:webhook_id/disable', admin(webhooks.disable)),
    route('POST', '/admin/v1/webhooks/:webhook_id/enable', admin(webhooks.enable)),
    route('POST', '/admin/v1/webhooks/:webhook_id/recover', admin(webhooks.recover)),
    route('POST', '/admin/v1/webhooks/:webhook_id/deliveries/:event_id/resend', admin(emailLog.resendDelivery)),

    // A project's emails as the dashboard's email log shows them.
    route('GET', '/admin/v1/projects/:project_id/emails', admin(emailLog.listProjectEmails)),
    route('GET', '/admin/v1/emails/:email_id', admin(emailLog.getEmail)),
    route('GET', '/admin/v1/emails/:email_id/attempts', admin(emailLog.deliveryAttempts)),
    route('POST', '/admin/v1/emails/:email_id/retry', admin(emailLog.retryNow)),
    route('GET', '/admin/v1/projects/:project_id/delivery', admin(emailLog.deliveryState)),
    route('POST', '/admin/v1/projects/:project_id/delivery/pause', admin(emailLog.pauseDelivery)),
    route('POST', '/admin/v1/projects/:project_id/delivery/resume', admin(emailLog.resumeDelivery)),

    // Captured mail (the SMTP sink) and the inbox on top of it.
    route('GET', '/admin/v1/messages', admin(messages.list)),
    route('DELETE', '/admin/v1/messages', admin(messages.deleteAll)),
    route('GET', '/admin/v1/messages/wait', admin(messages.wait)),
    route('GET', '/admin/v1/messages/:message_id', admin(messages.get)),
    route('GET', '/admin/v1/messages/:message_id/raw', admin(messages.raw)),
    route('GET', '/admin/v1/messages/:message_id/checks', admin(messages.checks)),
    route('DELETE', '/admin/v1/messages/:message_id', admin(inbox.deleteMessage)),
    route('POST', '/admin/v1/messages/:message_id/read', admin(inbox.markRead)),
    route('GET', '/admin/v1/messages/:message_id/html', admin(inbox.html)),
    route('GET', '/admin/v1/messages/:message_id/attachments/:index', admin(inbox.attachment)),
    route('POST', '/admin/v1/messages/:message_id/release', admin(inbox.release)),
    route('GET', '/admin/v1/inbox', admin(inbox.search)),
    route('GET', '/admin/v1/inbox/unread', admin(inbox.unread)),
    upgrade('/admin/v1/inbox/live', sockets.inboxLive.upgrade),

    // How applications connect to SMTP submission (the dashboard's keys page).
    route('GET', '/admin/v1/submission', admin(adminSubmissionHandlers(s, submission).settings)),

    // The test clock (relay started with --test-clock).
    route('GET', '/admin/v1/clock', admin(tenancy.clock)),
    route('POST', '/admin/v1/clock/advance', admin(tenancy.advanceClock)),

    // Dashboard sign-in: open, since it is how a session starts (CONTRACT section 8).
    route('POST', '/admin/v1/session', open(session.signIn)),
    route('GET', '/admin/v1/session', open(session.current)),
    route('DELETE', '/admin/v1/session', open(session.signOut)),

    // The dashboard's page and assets (CONTRACT section 8); they never shadow the paths above.
    route('GET', '/', open(dashboard.index)),
    route('GET', '/assets/:file', open(dashboard.asset)),
    route('GET', '/favicon.svg', open(dashboard.favicon)),
  ];
}
