// Link and image checks of a captured message (issue 26): what each http(s) URL answers, HEAD
// first and GET when HEAD is refused, with a short time-out, no credentials, a few at a time and
// a cap (the rest listed unchecked). Every connection, redirects included, goes through the
// webhook URL policy's guarded connector: never into a private address unless the relay allows
// local webhooks.
import type { GuardedClient as Client } from '../../webhooks/guarded-http.js';

export interface LinkCheck {
  url: string;
  kind: 'link' | 'image';
  checked: boolean;
  status: number | null;
  error: string | null;
}

export interface LinkCheckOptions {
  allowLocal: boolean;
  /** Per request (connect, headers); a URL that does not answer in time says so. */
  timeoutMs?: number;
  /** At most this many URLs are checked; the rest are listed with checked: false. */
  cap?: number;
  concurrency?: number;
}

const DEFAULT_TIMEOUT_MS = 5_000;
const DEFAULT_CAP = 100;
const DEFAULT_CONCURRENCY = 8;
const MAX_REDIRECTS = 5;

function describe(error: unknown, timeoutMs: number): string {
  const e = error as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
  const code = e?.code ?? e?.cause?.code;
  if (e?.name === 'UrlPolicyError' || code === 'ERR_WEBHOOK_URL_POLICY') return e.message;
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || e?.name === 'TimeoutError' || e?.name === 'AbortError') {
    return `no answer within ${timeoutMs / 1000} s`;
  }
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'the host does not resolve';
  return e?.message ? `${code ? `${code}: ` : ''}${e.message}` : String(error);
}

/** One request, without following redirects; the body is discarded. */
async function ask({ agent, request }: Client, url: URL, method: 'HEAD' | 'GET', timeoutMs: number): Promise<{ status: number; location: string | null }> {
  const response = await request(url, {
    method,
    dispatcher: agent,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    signal: AbortSignal.timeout(timeoutMs * 2),
    headers: { 'user-agent': 'Raven link check', accept: '*/*' },
  });
  await response.body.dump().catch(() => {});
  const location = response.headers.location;
  return { status: response.statusCode, location: typeof location === 'string' ? location : null };
}

async function checkUrl(client: Client, raw: string, timeoutMs: number): Promise<Pick<LinkCheck, 'checked' | 'status' | 'error'>> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { checked: false, status: null, error: 'not a valid URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { checked: false, status: null, error: 'only http and https URLs are checked' };
  if (url.username !== '' || url.password !== '') return { checked: false, status: null, error: 'not checked: the URL carries credentials' };
  try {
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      url.hash = '';
      let answer = await ask(client, url, 'HEAD', timeoutMs);
      // Many servers refuse or mishandle HEAD: ask again the way a reader's click would.
      if (answer.status === 405 || answer.status === 501 || answer.status === 403 || answer.status === 404) answer = await ask(client, url, 'GET', timeoutMs);
      if (answer.status >= 300 && answer.status < 400 && answer.location) {
        const next = new URL(answer.location, url);
        if (next.protocol !== 'http:' && next.protocol !== 'https:') return { checked: true, status: answer.status, error: `redirects to a ${next.protocol} URL` };
        url = next;
        continue;
      }
      return { checked: true, status: answer.status, error: answer.status >= 400 ? `HTTP ${answer.status}` : null };
    }
    return { checked: true, status: null, error: `more than ${MAX_REDIRECTS} redirects` };
  } catch (error) {
    return { checked: true, status: null, error: describe(error, timeoutMs) };
  }
}

export async function checkLinks(targets: ReadonlyArray<{ url: string; kind: 'link' | 'image' }>, options: LinkCheckOptions): Promise<LinkCheck[]> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const cap = options.cap ?? DEFAULT_CAP;
  const results: LinkCheck[] = targets.map((t) => ({ ...t, checked: false, status: null, error: null }));
  // undici loads with the first check (guarded-http.ts), not with the relay.
  const client = (await import('../../webhooks/guarded-http.js')).guardedClient(options.allowLocal, timeoutMs, { connections: 2 });
  let next = 0;
  const worker = async () => {
    while (next < Math.min(cap, results.length)) {
      const item = results[next++]!;
      Object.assign(item, await checkUrl(client, item.url, timeoutMs));
    }
  };
  try {
    await Promise.all(Array.from({ length: options.concurrency ?? DEFAULT_CONCURRENCY }, worker));
  } finally {
    await client.agent.close().catch(() => {});
  }
  for (const item of results.slice(cap)) item.error = `not checked: only the first ${cap} URLs are`;
  return results;
}
