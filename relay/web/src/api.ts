// The dashboard's only way to the relay: the typed JSON API of openapi.yaml (types generated in
// sdk/generated/openapi.ts), with the session cookie and the CSRF header on every change.
import type { components } from '../../../sdk/generated/openapi';

export type Schemas = components['schemas'];
export type InboxEntry = Schemas['InboxEntry'];
/** A frame of /admin/v1/inbox/live (openapi.yaml, x-websockets). */
export type InboxLiveFrame =
  | (Pick<Schemas['InboxPage'], 'unread'> & { type: 'captured' | 'changed'; messages?: InboxEntry[] })
  /** Checks badges computed in the background (no unread count: nothing was read or captured). */
  | { type: 'checked'; checks: Array<{ id: string; checks: Schemas['CheckSummary'] }> };

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

let csrfToken = '';
let upstream = false;
let onSignedOut: () => void = () => undefined;

export function setSession(session: Schemas['DashboardSession'] | null): void {
  csrfToken = session?.csrf_token ?? '';
  upstream = session?.upstream ?? false;
}

/** Whether the relay has an upstream SMTP provider, which releasing a message needs. */
export function relayHasUpstream(): boolean {
  return upstream;
}

export function whenSignedOut(callback: () => void): void {
  onSignedOut = callback;
}

export async function api<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') headers['x-raven-csrf'] = csrfToken;
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
    cache: 'no-store',
  });
  if (response.status === 204) return undefined as T;
  const data = (await response.json().catch(() => null)) as { error?: Schemas['Error']['error'] } | null;
  if (!response.ok) {
    const error = data?.error;
    const failure = new ApiFailure(response.status, error?.code ?? 'internal_error', error?.message ?? `HTTP ${response.status}`);
    if (response.status === 401 && path !== '/admin/v1/session') onSignedOut();
    throw failure;
  }
  return data as T;
}

/** Path segments are ids from the API: encoded so a strange id cannot change the path. */
export const seg = encodeURIComponent;
