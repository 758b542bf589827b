// Dashboard sessions: the admin token (or a one-time sign-in link) is exchanged for a random
// session id kept in an HttpOnly, SameSite=Strict cookie. Only SHA-256 digests of session ids
// and link nonces are kept, in memory: a restart signs everyone out, and prints a new link.
// Each session has its own CSRF token, which every state-changing request must echo in a header.
import { randomBytes } from 'node:crypto';
import { constantTimeEqual, hashSecret } from '../secrets.js';

export const SESSION_COOKIE = 'raven_session';
export const CSRF_HEADER = 'x-raven-csrf';
/** A session lasts this long from sign-in (real time), then the form asks again. */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
/** The sign-in link printed at start works once, for this long. */
export const SIGNIN_LINK_TTL_MS = 15 * 60 * 1000;
/** Beyond this, the oldest sessions are dropped (a bound on memory, not a limit anyone should meet). */
const MAX_SESSIONS = 10_000;

export interface DashboardSession {
  csrfToken: string;
  expiresAt: number;
}

export class DashboardSessions {
  private readonly sessions = new Map<string, DashboardSession>();
  private readonly links = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /** A new one-time sign-in nonce (for the URL fragment, which never reaches a server log or a Referer). */
  createSigninLink(): string {
    const nonce = randomBytes(24).toString('base64url');
    this.links.set(hashSecret(nonce), this.now() + SIGNIN_LINK_TTL_MS);
    return nonce;
  }

  /** True once per link, within its lifetime. */
  redeemSigninLink(nonce: string): boolean {
    const digest = hashSecret(nonce);
    const expiresAt = this.links.get(digest);
    this.links.delete(digest);
    return expiresAt !== undefined && expiresAt > this.now();
  }

  create(): { id: string; session: DashboardSession } {
    this.dropExpired();
    if (this.sessions.size >= MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
    const id = randomBytes(32).toString('base64url');
    const session = { csrfToken: randomBytes(24).toString('base64url'), expiresAt: this.now() + SESSION_TTL_MS };
    this.sessions.set(hashSecret(id), session);
    return { id, session };
  }

  find(id: string): DashboardSession | undefined {
    const digest = hashSecret(id);
    const session = this.sessions.get(digest);
    if (!session) return undefined;
    if (session.expiresAt <= this.now()) {
      this.sessions.delete(digest);
      return undefined;
    }
    return session;
  }

  end(id: string): void {
    this.sessions.delete(hashSecret(id));
  }

  private dropExpired(): void {
    const now = this.now();
    for (const [digest, session] of this.sessions) if (session.expiresAt <= now) this.sessions.delete(digest);
    for (const [digest, expiresAt] of this.links) if (expiresAt <= now) this.links.delete(digest);
  }
}

export function csrfMatches(session: DashboardSession, header: string | undefined): boolean {
  return header !== undefined && constantTimeEqual(header, session.csrfToken);
}

/** The session id from a Cookie header, if any. */
export function sessionIdFromCookie(cookieHeader: string | undefined): string | undefined {
  if (!cookieHeader) return undefined;
  for (const part of cookieHeader.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export function sessionCookie(id: string, maxAgeSeconds: number): string {
  return `${SESSION_COOKIE}=${id}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}`;
}

export function clearedSessionCookie(): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`;
}
