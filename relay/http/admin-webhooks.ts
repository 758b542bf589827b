// /admin/v1 webhook endpoints: the requests and responses; the rules are domain/webhook-endpoints.ts.
import { asBody } from '../domain/admin-body.js';
import { createEndpoint, deleteEndpoint, listDeliveries, listEndpoints } from '../domain/webhook-endpoints.js';
import type { RelayServices } from '../services.js';
import type { RequestContext } from './context.js';
import { adminRoute } from './route-helpers.js';
import type { Route } from './router.js';

const ADMIN_BODY_LIMIT = 64 * 1024;

/** Admin bodies are small JSON objects; an empty body counts as {}. */
async function adminBody(ctx: RequestContext): Promise<Record<string, unknown>> {
  const raw = await ctx.readBody(ADMIN_BODY_LIMIT);
  if (raw.length === 0) return {};
  return asBody(await ctx.readJson(ADMIN_BODY_LIMIT));
}

export function adminWebhookRoutes(s: RelayServices): Route[] {
  return [
    adminRoute(s, 'POST', '/admin/v1/projects/:project_id/webhooks', async (ctx) => ({
      status: 201,
      body: await createEndpoint(s, ctx.params.project_id!, await adminBody(ctx)),
    })),
    adminRoute(s, 'GET', '/admin/v1/projects/:project_id/webhooks', async (ctx) => ({
      status: 200,
      body: await listEndpoints(s, ctx.params.project_id!),
    })),
    adminRoute(s, 'DELETE', '/admin/v1/webhooks/:webhook_id', async (ctx) => {
      await deleteEndpoint(s, ctx.params.webhook_id!);
      return { status: 204 };
    }),
    adminRoute(s, 'GET', '/admin/v1/webhooks/:webhook_id/deliveries', async (ctx) => ({
      status: 200,
      body: await listDeliveries(s, ctx.params.webhook_id!),
    })),
  ];
}
