// /v1/emails: admission and reads.
import { admitEmail } from '../domain/admission.js';
import { requirePermission } from '../domain/auth.js';
import { ApiError } from '../errors.js';
import { getEmail, listEmails, parseListQuery } from '../domain/reads.js';
import type { RelayServices } from '../services.js';
import { apiRoute } from './route-helpers.js';
import type { Route } from './router.js';

export function emailRoutes(s: RelayServices): Route[] {
  return [
    apiRoute(s, 'POST', '/v1/emails', async (ctx, key) => {
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
    }),
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
