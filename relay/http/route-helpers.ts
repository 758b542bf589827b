// Route constructors that put authentication in front of a handler, so no handler forgets it.
import { authenticateKey, type KeyPrincipal } from '../domain/auth.js';
import type { RelayServices } from '../services.js';
import { authenticateAdminRequest } from './admin-auth.js';
import type { Reply, RequestContext } from './context.js';
import type { Route } from './router.js';

type Method = Route['method'];

export function adminRoute(
  services: RelayServices,
  method: Method,
  path: string,
  handler: (ctx: RequestContext) => Promise<Reply>,
): Route {
  return {
    method,
    path,
    handler: async (ctx) => {
      authenticateAdminRequest(services, ctx);
      return handler(ctx);
    },
  };
}

export function apiRoute(
  services: RelayServices,
  method: Method,
  path: string,
  handler: (ctx: RequestContext, key: KeyPrincipal) => Promise<Reply>,
): Route {
  return {
    method,
    path,
    handler: async (ctx) => handler(ctx, await authenticateKey(services.db, services.keys, ctx.singleHeader('authorization'), services.keyUse)),
  };
}

export function publicRoute(method: Method, path: string, handler: (ctx: RequestContext) => Promise<Reply>): Route {
  return { method, path, handler };
}
