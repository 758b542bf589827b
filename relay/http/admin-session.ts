// /admin/v1/session: the dashboard signs in with the admin token (or the one-time link the relay
// printed at start), reads its CSRF token, and signs out.
import { asBody } from '../domain/admin-body.js';
import { clearedSessionCookie, SESSION_TTL_MS, sessionCookie, type DashboardSession } from '../dashboard/sessions.js';
import { ApiError, validationError } from '../errors.js';
import { constantTimeEqual } from '../secrets.js';
import type { RelayServices } from '../services.js';
import { currentSession, requireSameOrigin, withTokenBudget } from './admin-auth.js';
import type { Handler } from './router.js';

const SESSION_BODY_LIMIT = 4 * 1024;

export function adminSessionHandlers(s: RelayServices) {
  // `upstream` lets the dashboard refuse a release on its first dialog rather than after two.
  const sessionView = (session: DashboardSession) => ({
    csrf_token: session.csrfToken,
    expires_at: new Date(session.expiresAt).toISOString(),
    upstream: s.config.delivery.provider === 'smtp',
  });
  return {
    signIn: async (ctx) => {
      const body = asBody(await ctx.readJson(SESSION_BODY_LIMIT));
      const unknown = Object.keys(body).filter((k) => k !== 'token' && k !== 'signin_link');
      const { token, signin_link: link } = body;
      if (unknown.length > 0 || (token === undefined) === (link === undefined)) {
        throw validationError([
          ...unknown.map((field) => ({ field, message: 'is not a known field' })),
          ...(unknown.length === 0 ? [{ field: 'token', message: 'give the admin token, or the signin_link of the start-up link' }] : []),
        ]);
      }
      if (token !== undefined && typeof token !== 'string') throw validationError([{ field: 'token', message: 'must be a string' }]);
      if (link !== undefined && typeof link !== 'string') throw validationError([{ field: 'signin_link', message: 'must be a string' }]);
      await withTokenBudget(s, ctx, async () => {
        const accepted = typeof token === 'string' ? constantTimeEqual(token, s.adminToken) : await s.sessions.redeemSigninLink(link as string);
        if (!accepted) {
          throw new ApiError('unauthorized', typeof token === 'string' ? 'That is not the admin token.' : 'The sign-in link has expired or was already used.');
        }
      });
      const { id, session } = await s.sessions.create();
      s.log.info('http', 'dashboard sign-in', { request_id: ctx.requestId, by: typeof token === 'string' ? 'token' : 'link' });
      return {
        status: 201,
        body: sessionView(session),
        headers: { 'Set-Cookie': sessionCookie(id, Math.floor(SESSION_TTL_MS / 1000)), 'Cache-Control': 'no-store' },
      };
    },
    current: async (ctx) => {
      const current = await currentSession(s, ctx);
      if (!current) throw new ApiError('unauthorized', 'Not signed in to the dashboard.');
      return { status: 200, body: sessionView(current.session), headers: { 'Cache-Control': 'no-store' } };
    },
    signOut: async (ctx) => {
      const current = await currentSession(s, ctx);
      if (current) {
        requireSameOrigin(ctx, current.session);
        await s.sessions.end(current.id);
      }
      return { status: 204, headers: { 'Set-Cookie': clearedSessionCookie() } };
    },
  } satisfies Record<string, Handler>;
}
