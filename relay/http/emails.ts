// /v1/emails: admission and reads; /v1/domains: the domains a key may send from.
import { admitEmail } from '../domain/admission.js';
import { requirePermission } from '../domain/auth.js';
import { ApiError } from '../errors.js';
import { getEmail, listEmails, parseListQuery } from '../domain/reads.js';
import { senderDomainsOfProject } from '../domain/sending-domains.js';
import type { Metrics } from '../metrics.js';
import type { RelayServices } from '../services.js';
import { ClientAbortedError } from './context.js';
import { asApiError } from './error-reply.js';
import type { KeyHandler } from './route-helpers.js';
import type { Handler } from './router.js';

/** Counts every answer of the admission route, refusals included (authentication too), and the
 * requests their clients abandoned mid-body. */
export function countAdmissions(metrics: Metrics, handler: Handler): Handler {
  return async (ctx) => {
    try {
      const reply = await handler(ctx);
      const replayed = reply.headers?.['Idempotent-Replayed'] !== undefined;
      metrics.inc('raven_admissions_total', { result: replayed ? 'replayed' : reply.status === 202 ? 'accepted' : 'suppressed' });
      return reply;
    } catch (error) {
      // A client that hung up mid-body was not refused: it is counted apart, never as an error code.
      if (error instanceof ClientAbortedError) {
        metrics.inc('raven_admissions_total', { result: 'aborted' });
      } else {
        metrics.inc('raven_admissions_total', { result: 'rejected' });
        metrics.inc('raven_admission_rejections_total', { code: asApiError(error).code });
      }
      throw error;
    }
  };
}

export function emailHandlers(s: RelayServices) {
  return {
    send: async (ctx, key) => {
      requirePermission(key, 'email:send');
      const idempotencyKey = ctx.singleHeader('idempotency-key');
      const body = await ctx.readJson(s.config.limits.maxRequestBytes);
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        throw new ApiError('invalid_request', 'The body must be a JSON object.');
      }
      const result = await admitEmail(s, key, { kind: 'json', body, idempotencyKey });
      return {
        status: result.status,
        body: result.body,
        headers: result.replayed ? { 'Idempotent-Replayed': 'true' } : undefined,
      };
    },
    list: async (ctx, key) => {
      requirePermission(key, 'read');
      return { status: 200, body: await listEmails(s.db, key, parseListQuery(ctx.url.searchParams)) };
    },
    get: async (ctx, key) => {
      requirePermission(key, 'read');
      return { status: 200, body: await getEmail(s.db, key, ctx.params.email_id!) };
    },
    // Any valid key may ask which domains it can send from: it reveals nothing a send would not.
    domains: async (_ctx, key) => ({ status: 200, body: await senderDomainsOfProject(s, key.projectId) }),
  } satisfies Record<string, KeyHandler>;
}
