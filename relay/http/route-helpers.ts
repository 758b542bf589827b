// Who may call a route, put in front of its handler by the route table (routes.ts), so no handler
// forgets it; and the small request-reading helpers the admin handlers share.
import { authenticateKey, type KeyPrincipal } from '../domain/auth.js';
import { asBody } from '../domain/admin-body.js';
import { isStorableText } from '../domain/storable-text.js';
import { ApiError } from '../errors.js';
import type { RelayServices } from '../services.js';
import { authenticateAdminRequest } from './admin-auth.js';
import type { Reply, RequestContext } from './context.js';
import type { Handler } from './router.js';

/** A handler that runs for an authenticated API key. */
export type KeyHandler = (ctx: RequestContext, key: KeyPrincipal) => Promise<Reply>;

/** An API key (Authorization: Bearer rr_...) must authenticate first. */
export function withApiKey(services: RelayServices, handler: KeyHandler): Handler {
  return async (ctx) => {
    const key = await authenticateKey(services.db, services.keys, ctx.singleHeader('authorization'), services.keyUse);
    requirePathThatCanExist(ctx);
    return handler(ctx, key);
  };
}

/** The admin token or a dashboard session (with its CSRF checks) must authenticate first. */
export function withAdmin(services: RelayServices, handler: Handler): Handler {
  return async (ctx) => {
    await authenticateAdminRequest(services, ctx);
    requirePathThatCanExist(ctx);
    return handler(ctx);
  };
}

/** Anyone may call it. */
export function withoutAuth(handler: Handler): Handler {
  return async (ctx) => {
    requirePathThatCanExist(ctx);
    return handler(ctx);
  };
}

/**
 * An id in the path that no row can hold (a NUL, storable-text.ts) names nothing: the ordinary
 * 404, decided here for every route (after authentication, as for any unknown id) rather than
 * asked of storage, where PostgreSQL would refuse the statement.
 */
function requirePathThatCanExist(ctx: RequestContext): void {
  for (const [name, value] of Object.entries(ctx.params)) {
    if (!isStorableText(value)) throw new ApiError('not_found', `Nothing exists with that ${name.replace(/_/g, ' ')}.`);
  }
}

const ADMIN_BODY_LIMIT = 64 * 1024;

/** Admin bodies are small JSON objects; an empty body counts as {}. */
export async function adminBody(ctx: RequestContext): Promise<Record<string, unknown>> {
  const raw = await ctx.readBody(ADMIN_BODY_LIMIT);
  if (raw.length === 0) return {};
  return asBody(await ctx.readJson(ADMIN_BODY_LIMIT));
}

/** A path parameter the route table guarantees. */
export const param = (ctx: RequestContext, name: string): string => ctx.params[name]!;
