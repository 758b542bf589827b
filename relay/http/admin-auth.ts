// Who may call /admin/v1: the admin token as a Bearer header (the CLI, scripts), or a dashboard
// session cookie. A cookie rides along on requests another site makes, so with a cookie every
// state-changing request must also come from our own origin and echo the session's CSRF token in
// a header, which a cross-site form or script cannot set. Wrong tokens spend a failure budget per
// client address (withTokenBudget).
import { setTimeout as delay } from 'node:timers/promises';
import { authenticateAdmin } from '../domain/auth.js';
import { ApiError } from '../errors.js';
import type { RelayServices } from '../services.js';
import { CSRF_HEADER, csrfMatches, sessionIdFromCookie, type DashboardSession } from '../dashboard/sessions.js';
import type { RequestContext } from './context.js';

export async function authenticateAdminRequest(s: RelayServices, ctx: RequestContext): Promise<void> {
  const authorization = ctx.singleHeader('authorization');
  const sessionId = sessionIdFromCookie(ctx.req.headers.cookie);
  if (authorization !== undefined) {
    await withTokenBudget(s, ctx, () => authenticateAdmin(s.adminToken, authorization));
    return;
  }
  // Neither header nor cookie: refused as a missing token, which is no guess and spends no budget.
  if (sessionId === undefined) return authenticateAdmin(s.adminToken, undefined);
  const session = await s.sessions.find(sessionId);
  if (!session) throw new ApiError('unauthorized', 'The dashboard session has ended; sign in again.');
  if (ctx.req.method !== 'GET') requireSameOrigin(ctx, session);
}

const clientAddress = (ctx: RequestContext): string => ctx.req.socket.remoteAddress ?? 'unknown';

function tooManyFailures(retryAfter: number): ApiError {
  return new ApiError('rate_limit_exceeded', `Too many wrong admin tokens from this address; retry after ${retryAfter} seconds.`, { retryAfter });
}

/**
 * Runs a check of the admin token (or a sign-in link) under the caller's failure budget: an
 * address over it is refused 429 before anything is checked, and each failure answers a little
 * later than the last, the one that uses the budget up with 429 (CONTRACT section 9's rule).
 */
export async function withTokenBudget<T>(s: RelayServices, ctx: RequestContext, check: () => T | Promise<T>): Promise<T> {
  const address = clientAddress(ctx);
  const wait = s.adminTokenFailures.retryAfterSeconds(address);
  if (wait !== undefined) throw tooManyFailures(wait);
  try {
    return await check();
  } catch (error) {
    if (!(error instanceof ApiError) || error.code !== 'unauthorized') throw error;
    const { delayMs, exhausted } = s.adminTokenFailures.record(address);
    await delay(delayMs);
    if (exhausted) throw tooManyFailures(s.adminTokenFailures.retryAfterSeconds(address) ?? 1);
    throw error;
  }
}

/** The session of a cookie-carrying request, or undefined (for the session endpoints themselves). */
export async function currentSession(s: RelayServices, ctx: RequestContext): Promise<{ id: string; session: DashboardSession } | undefined> {
  const id = sessionIdFromCookie(ctx.req.headers.cookie);
  const session = id === undefined ? undefined : await s.sessions.find(id);
  return id !== undefined && session ? { id, session } : undefined;
}

export function requireSameOrigin(ctx: RequestContext, session: DashboardSession): void {
  const { req } = ctx;
  const origin = req.headers.origin;
  const fetchSite = req.headers['sec-fetch-site'];
  let sameOrigin = fetchSite === undefined || fetchSite === 'same-origin';
  if (origin !== undefined) {
    try {
      sameOrigin &&= new URL(origin).host === req.headers.host;
    } catch {
      sameOrigin = false;
    }
  }
  if (!sameOrigin) throw new ApiError('forbidden', 'Cross-site request refused: dashboard actions must come from the dashboard itself.');
  if (!csrfMatches(session, ctx.singleHeader(CSRF_HEADER))) {
    throw new ApiError('forbidden', `Cross-site request refused: the ${CSRF_HEADER} header is missing or wrong.`);
  }
}
