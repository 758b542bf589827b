// Dashboard sessions: the admin token (or a one-time sign-in link) is exchanged for a random
// session id kept in an HttpOnly, SameSite=Strict cookie. Sessions and links live in the database
// (relay/storage/dashboard-sessions.ts), as SHA-256 digests only, so every relay sharing it honours
// them and a restart keeps people signed in; a session ends at sign-out, after SESSION_TTL_MS, or
// when the admin token changes. Each session has its own CSRF token, which every state-changing
// request must echo in a header; it is derived from the session id, so it is never stored.
import { createHash, randomBytes } from 'node:crypto';
import { constantTimeEqual, hashSecret } from '../secrets.js';
import type { Db } from '../storage/db.js';
import { deleteExpired, deleteSession, findSession, insertSession, insertSigninLink, takeSigninLink } from '../storage/dashboard-sessions.js';

export const SESSION_COOKIE = 'raven_session';
export const CSRF_HEADER = 'x-raven-csrf';
/** A session lasts this long from sign-in (real time), then the form asks again. */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
/** The sign-in link printed at start works once, for this long. */
export const SIGNIN_LINK_TTL_MS = 15 * 60 * 1000;

export interface DashboardSession {
  csrfToken: string;
  expiresAt: number;
}

/** The CSRF token of a session: only the holder of the session id can compute it. */
function csrfTokenOf(id: string): string {
  return createHash('sha256').update(`raven-csrf\0${id}`, 'utf8').digest('base64url');
}

export class DashboardSessions {
  private readonly adminTokenHash: string;

  constructor(
    private readonly db: Db,
    adminToken: string,
    private readonly now: () => number = Date.now,
  ) {
    this.adminTokenHash = hashSecret(adminToken);
  }

  /** A new one-time sign-in nonce (for the URL fragment, which never reaches a server log or a Referer). */
  async createSigninLink(): Promise<string> {
    const nonce = randomBytes(24).toString('base64url');
    await this.db.write((tx) => insertSigninLink(tx, hashSecret(nonce), this.now() + SIGNIN_LINK_TTL_MS));
    return nonce;
  }

  /** True once per link, within its lifetime, whichever relay redeems it. */
  redeemSigninLink(nonce: string): Promise<boolean> {
    return this.db.write((tx) => takeSigninLink(tx, hashSecret(nonce), this.now()));
  }

  async create(): Promise<{ id: string; session: DashboardSession }> {
    const id = randomBytes(32).toString('base64url');
    const expiresAt = this.now() + SESSION_TTL_MS;
    await this.db.write(async (tx) => {
      await deleteExpired(tx, this.now());
      await insertSession(tx, hashSecret(id), this.adminTokenHash, expiresAt);
    });
    return { id, session: { csrfToken: csrfTokenOf(id), expiresAt } };
  }

  async find(id: string): Promise<DashboardSession | undefined> {
    const expiresAt = await findSession(this.db, hashSecret(id), this.adminTokenHash, this.now());
    return expiresAt === undefined ? undefined : { csrfToken: csrfTokenOf(id), expiresAt };
  }

  async end(id: string): Promise<void> {
    await this.db.write((tx) => deleteSession(tx, hashSecret(id)));
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
