// /admin/v1 webhook endpoints: the requests and responses; the rules are domain/webhook-endpoints.ts.
import { createEndpoint, deleteEndpoint, listDeliveries, listEndpoints, recoverDeliveries, rotateSecret, setEndpointEnabled } from '../domain/webhook-endpoints.js';
import type { RelayServices } from '../services.js';
import { adminBody } from './route-helpers.js';
import type { Handler } from './router.js';

export function adminWebhookHandlers(s: RelayServices) {
  return {
    create: async (ctx) => ({
      status: 201,
      body: await createEndpoint(s, ctx.params.project_id!, await adminBody(ctx)),
    }),
    list: async (ctx) => ({
      status: 200,
      body: await listEndpoints(s, ctx.params.project_id!),
    }),
    delete: async (ctx) => {
      await deleteEndpoint(s, ctx.params.webhook_id!);
      return { status: 204 };
    },
    rotateSecret: async (ctx) => ({
      status: 200,
      body: await rotateSecret(s, ctx.params.webhook_id!, await adminBody(ctx)),
    }),
    disable: async (ctx) => ({ status: 200, body: await setEndpointEnabled(s, ctx.params.webhook_id!, false) }),
    enable: async (ctx) => ({ status: 200, body: await setEndpointEnabled(s, ctx.params.webhook_id!, true) }),
    recover: async (ctx) => ({
      status: 200,
      body: await recoverDeliveries(s, ctx.params.webhook_id!, await adminBody(ctx)),
    }),
    deliveries: async (ctx) => ({
      status: 200,
      body: await listDeliveries(s, ctx.params.webhook_id!),
    }),
  } satisfies Record<string, Handler>;
}
