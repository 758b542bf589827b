// /v1/emails: admission and reads.
import { admitEmail } from '../domain/admission.js';
import { requirePermission } from '../domain/auth.js';
import { ApiError } from '../errors.js';
import { getEmail, listEmails, parseListQuery } from '../domain/reads.js';
import type { Metrics } from '../metrics.js';
import type { RelayServices } from '../services.js';
import { StorageUnavailableError } from '../storage/db.js';
import { apiRoute } from './route-helpers.js';
import type { Route } from './router.js';

/** The error code the answer will carry (server.ts maps errors the same way). */
function rejectionCode(error: unknown): string {
  if (error instanceof ApiError) return error.code;
  return error instanceof StorageUnavailableError ? 'service_unavailable' : 'internal_error';
}

/** Counts every answer of the admission route, refusals included (authentication too). */
function countAdmissions(metrics: Metrics, route: Route): Route {
  return {
    ...route,
    handler: async (ctx) => {
      try {
        const reply = await route.handler(ctx);
        const replayed = reply.headers?.['Idempotent-Replayed'] !== undefined;
        metrics.inc('raven_admissions_total', { result: replayed ? 'replayed' : reply.status === 202 ? 'accepted' : 'suppressed' });
        return reply;
      } catch (error) {
        metrics.inc('raven_admissions_total', { result: 'rejected' });
        metrics.inc('raven_admission_rejections_total', { code: rejectionCode(error) });
        throw error;
      }
    },
  };
}

export function emailRoutes(s: RelayServices): Route[] {
  return [
    countAdmissions(s.metrics, apiRoute(s, 'POST', '/v1/emails', async (ctx, key) => {
      requirePermission(key, 'email:send');
      const idempotencyKey = ctx.singleHeader('idempotency-key');
      const body = await ctx.readJson(s.config.limits.maxRequestBytes);
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        throw new ApiError('invalid_request', 'The body must be a JSON object.');
      }
      const result = await admitEmail(s, key, body, idempotencyKey);
      return {
        status: result.status,
        body: result.body,
        headers: result.replayed ? { 'Idempotent-Replayed': 'true' } : undefined,
      };
    })),
    apiRoute(s, 'GET', '/v1/emails', async (ctx, key) => {
      requirePermission(key, 'read');
      return { status: 200, body: await listEmails(s.db, key, parseListQuery(ctx.url.searchParams)) };
    }),
    apiRoute(s, 'GET', '/v1/emails/:email_id', async (ctx, key) => {
      requirePermission(key, 'read');
      return { status: 200, body: await getEmail(s.db, key, ctx.params.email_id!) };
    }),
  ];
}
