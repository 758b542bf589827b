// /admin/v1/messages: mail captured by the SMTP sink (CONTRACT sections 6 and 10), and the wait for it.
import { ApiError, validationError, type ErrorDetail } from '../errors.js';
import type { MessageWaits, WaitFilter } from '../inbox/message-waits.js';
import type { RelayServices } from '../services.js';
import { deleteAllCapturedMessages, getCapturedMessage, listCapturedMessages, type CapturedFilter } from '../storage/captured.js';
import { getProject } from '../storage/tenancy.js';
import { parseHeaders } from '../smtp/headers.js';
import { simulatedOutcome } from '../smtp/sink-server.js';
import { countRemoteReferences } from '../inbox/html-view.js';
import { extractCodes, extractLinks } from '../inbox/links-and-codes.js';
import { attachmentViews, parseMessage } from '../inbox/read-message.js';
import { getInboxEntry } from '../storage/inbox.js';
import type { RequestContext } from './context.js';
import type { Handler } from './router.js';

// openapi.yaml (adminListCapturedMessages): limit 1-1000, default 100.
const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;
// openapi.yaml (adminWaitForMessage): timeout 1-120 seconds, default 30.
const DEFAULT_WAIT_SECONDS = 30;
const MAX_WAIT_SECONDS = 120;

/** The single value of a query parameter, trimmed; a repeat or an empty value is a detail. */
function singleParam(ctx: RequestContext, name: string, details: ErrorDetail[]): string | undefined {
  const values = ctx.url.searchParams.getAll(name);
  if (values.length > 1) {
    details.push({ field: name, message: 'must be given at most once' });
    return undefined;
  }
  if (values.length === 0) return undefined;
  const value = values[0]!.trim();
  if (value === '') {
    details.push({ field: name, message: 'must not be empty' });
    return undefined;
  }
  return value;
}

function integerParam(ctx: RequestContext, name: string, range: { min: number; max: number; fallback: number }, details: ErrorDetail[]): number {
  const raw = singleParam(ctx, name, details);
  if (raw === undefined) return range.fallback;
  if (!/^\d{1,6}$/.test(raw) || Number(raw) < range.min || Number(raw) > range.max) {
    details.push({ field: name, message: `must be an integer from ${range.min} to ${range.max}` });
    return range.fallback;
  }
  return Number(raw);
}

/** `?project=`: a project that exists (CONTRACT section 10), else a detail. */
export async function projectParam(services: RelayServices, ctx: RequestContext, details: ErrorDetail[]): Promise<string | undefined> {
  const project = singleParam(ctx, 'project', details);
  if (project === undefined) return undefined;
  if (!(await getProject(services.db, project))) details.push({ field: 'project', message: `no project with id ${project}` });
  return project;
}

async function listQuery(services: RelayServices, ctx: RequestContext): Promise<CapturedFilter & { limit: number }> {
  const details: ErrorDetail[] = [];
  const limit = integerParam(ctx, 'limit', { min: 1, max: MAX_LIMIT, fallback: DEFAULT_LIMIT }, details);
  const to = singleParam(ctx, 'to', details);
  const project = await projectParam(services, ctx, details);
  if (details.length > 0) throw validationError(details);
  return { limit, ...(to === undefined ? {} : { to }), ...(project === undefined ? {} : { project }) };
}

async function waitQuery(services: RelayServices, waits: MessageWaits, ctx: RequestContext): Promise<{ filter: WaitFilter; timeoutSeconds: number }> {
  const details: ErrorDetail[] = [];
  const to = singleParam(ctx, 'to', details);
  const subject = singleParam(ctx, 'subject', details);
  const project = await projectParam(services, ctx, details);
  const after = singleParam(ctx, 'after', details);
  const timeoutSeconds = integerParam(ctx, 'timeout', { min: 1, max: MAX_WAIT_SECONDS, fallback: DEFAULT_WAIT_SECONDS }, details);
  const afterSeq = after === undefined ? undefined : await waits.seqOf(after);
  if (after !== undefined && afterSeq === undefined) details.push({ field: 'after', message: `no captured message with id ${after}` });
  if (details.length > 0) throw validationError(details);
  const filter: WaitFilter = { to, subject, project, afterSeq };
  for (const key of Object.keys(filter) as Array<keyof WaitFilter>) if (filter[key] === undefined) delete filter[key];
  return { filter, timeoutSeconds };
}

async function loadMessage(services: RelayServices, id: string) {
  const message = await getCapturedMessage(services.db, id);
  if (!message) throw new ApiError('not_found', `No captured message with id ${id}.`);
  return message;
}

/** The captured detail (openapi.yaml's CapturedMessage). */
async function capturedDetail(services: RelayServices, id: string) {
  const { raw, email_id, ...summary } = await loadMessage(services, id);
  const [parsed, entry] = await Promise.all([parseMessage(raw), getInboxEntry(services.db, summary.id)]);
  const html = typeof parsed.html === 'string' && parsed.html !== '' ? parsed.html : null;
  return {
    ...summary,
    headers: parseHeaders(raw),
    text: parsed.text || null,
    html,
    email_id,
    read: entry?.read ?? false,
    attachments: attachmentViews(parsed),
    remote_resources: html === null ? 0 : countRemoteReferences(html),
    simulated_outcomes: summary.to
      .map((recipient) => ({ recipient, outcome: simulatedOutcome(recipient) }))
      .filter((o) => o.outcome !== 'delivered'),
    links: extractLinks(html, parsed.text || null),
    codes: extractCodes(html, parsed.text || null),
  };
}

/** Aborts when the client goes away before its answer (a long poll then frees its wait). */
function clientGone(ctx: RequestContext): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  const socket = ctx.req.socket;
  const onClose = () => controller.abort();
  if (socket.destroyed) controller.abort();
  else socket.once('close', onClose);
  return { signal: controller.signal, release: () => socket.off('close', onClose) };
}

export function adminMessageHandlers(services: RelayServices) {
  const waits = services.messageWaits;
  return {
    list: async (ctx) => ({
      status: 200,
      body: { messages: await listCapturedMessages(services.db, await listQuery(services, ctx)) },
    }),
    wait: async (ctx) => {
      const { filter, timeoutSeconds } = await waitQuery(services, waits, ctx);
      const gone = clientGone(ctx);
      try {
        const end = await waits.wait(filter, timeoutSeconds * 1000, gone.signal);
        if ('id' in end) return { status: 200, body: await capturedDetail(services, end.id) };
        if (end.ended === 'stopping') throw new ApiError('service_unavailable', 'The relay is stopping; wait again.', { retryAfter: 1 });
        throw new ApiError('wait_timeout', `No matching message was captured within ${timeoutSeconds} seconds.`);
      } finally {
        gone.release();
      }
    },
    deleteAll: async () => {
      await services.db.write((tx) => deleteAllCapturedMessages(tx));
      return { status: 204 };
    },
    get: async (ctx) => ({ status: 200, body: await capturedDetail(services, ctx.params.message_id!) }),
    raw: async (ctx) => {
      const message = await loadMessage(services, ctx.params.message_id!);
      return { status: 200, raw: { contentType: 'message/rfc822', data: message.raw } };
    },
  } satisfies Record<string, Handler>;
}
