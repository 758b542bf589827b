// /admin/v1/messages: mail captured by the SMTP sink (CONTRACT sections 6 and 10), and the wait for it.
import { QueryParams } from '../domain/query-params.js';
import { isStorableText, unstorableReason } from '../domain/storable-text.js';
import { MAX_SUBJECT_LENGTH } from '../domain/send-request.js';
import { MAX_ADDRESS_LENGTH } from '../mail/mailbox.js';
import { ApiError } from '../errors.js';
import type { MessageWaits, WaitFilter } from '../inbox/message-waits.js';
import { simulatedOutcome } from '../mail/simulated.js';
import type { RelayServices } from '../services.js';
import { deleteAllCapturedMessages, getCapturedMessage, listCapturedMessages, type CapturedFilter } from '../storage/captured.js';
import { getProject } from '../storage/tenancy.js';
import { parseHeaders } from '../mail/headers.js';
import { countRemoteReferences } from '../inbox/html-view.js';
import { extractCodes, extractLinks } from '../inbox/links-and-codes.js';
import { getInboxEntry } from '../storage/inbox.js';
import { checkCapturedMessage } from '../inbox/checks/message-checks.js';
import { downloadHeaders } from '../dashboard/security-headers.js';
import type { RequestContext } from './context.js';
import type { Handler } from './router.js';

// openapi.yaml (adminListCapturedMessages): limit 1-1000, default 100.
const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;
// openapi.yaml (adminWaitForMessage): timeout 1-120 seconds, default 30.
const DEFAULT_WAIT_SECONDS = 30;
const MAX_WAIT_SECONDS = 120;

/** A filter's value, trimmed; an empty one is a broken rule. */
function textFilter(query: QueryParams, name: string): string | undefined {
  const value = query.filter(name);
  if (value === undefined) return undefined;
  if (value.trim() === '') {
    query.details.push({ field: name, message: 'must not be empty' });
    return undefined;
  }
  return value.trim();
}

/**
 * A wait's text filter. One that no message can match (unstorable, or longer than any address or
 * subject) is a broken rule: as a filter of a list it answers an empty page, but a wait on it
 * could only sit out its time-out.
 */
function waitFilter(query: QueryParams, name: string, maxLength: number): string | undefined {
  const value = textFilter(query, name);
  if (value === undefined) return undefined;
  const reason = unstorableReason(value) ?? (value.length > maxLength ? `must be at most ${maxLength} characters` : undefined);
  if (reason) query.details.push({ field: name, message: reason });
  return value;
}

/** `?project=`: a project that exists (CONTRACT section 10), else a broken rule. */
export async function projectParam(services: RelayServices, query: QueryParams): Promise<string | undefined> {
  const project = query.single('project');
  if (project === undefined) return undefined;
  if (!isStorableText(project) || !(await getProject(services.db, project))) {
    query.details.push({ field: 'project', message: `no project with id ${JSON.stringify(project)}` });
  }
  return project;
}

async function listQuery(services: RelayServices, ctx: RequestContext): Promise<CapturedFilter & { limit: number; matchesNothing: boolean }> {
  const query = new QueryParams(ctx.url.searchParams);
  const limit = query.integer('limit', { min: 1, max: MAX_LIMIT, fallback: DEFAULT_LIMIT });
  const to = textFilter(query, 'to');
  const project = await projectParam(services, query);
  const { matchesNothing } = query.finish();
  return { limit, matchesNothing, ...(to === undefined ? {} : { to }), ...(project === undefined ? {} : { project }) };
}

async function waitQuery(services: RelayServices, ctx: RequestContext): Promise<{ filter: WaitFilter; timeoutSeconds: number }> {
  const query = new QueryParams(ctx.url.searchParams);
  const to = waitFilter(query, 'to', MAX_ADDRESS_LENGTH);
  const subject = waitFilter(query, 'subject', MAX_SUBJECT_LENGTH);
  const project = await projectParam(services, query);
  const after = query.single('after');
  const timeoutSeconds = query.integer('timeout', { min: 1, max: MAX_WAIT_SECONDS, fallback: DEFAULT_WAIT_SECONDS });
  const afterSeq = after === undefined || !isStorableText(after) ? undefined : await services.messageWaits.seqOf(after);
  if (after !== undefined && afterSeq === undefined) query.details.push({ field: 'after', message: `no captured message with id ${JSON.stringify(after)}` });
  const { matchesNothing } = query.finish();
  const filter: WaitFilter = { to, subject, project, afterSeq, ...(matchesNothing ? { matchesNothing } : {}) };
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
  // The MIME parser loads with the first message opened, not with the relay.
  const { attachmentViews, parseMessage } = await import('../inbox/read-message.js');
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

/**
 * Aborts when the client goes away before its answer (a long poll then frees its wait). Its end of
 * the connection closing counts: the server lets a half-closed client have its answer (server.ts),
 * so a client that closed the whole connection leaves the socket open until the server writes, and
 * a wait of minutes would hold it that long. A long poll is no request to half-close after.
 */
function clientGone(ctx: RequestContext): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  const socket = ctx.req.socket;
  const onGone = () => controller.abort();
  if (socket.destroyed || socket.readableEnded) controller.abort();
  else {
    socket.once('end', onGone);
    socket.once('close', onGone);
  }
  return {
    signal: controller.signal,
    release: () => {
      socket.off('end', onGone);
      socket.off('close', onGone);
    },
  };
}

export function adminMessageHandlers(services: RelayServices) {
  const waits = services.messageWaits;
  return {
    list: async (ctx) => {
      const { matchesNothing, ...query } = await listQuery(services, ctx);
      const messages = matchesNothing ? [] : await listCapturedMessages(services.db, query);
      return { status: 200, body: { messages: await services.checkSummaries.attach(messages) } };
    },
    wait: async (ctx) => {
      const { filter, timeoutSeconds } = await waitQuery(services, ctx);
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
    checks: async (ctx) => {
      const query = new QueryParams(ctx.url.searchParams);
      const links = query.single('links');
      if (links !== undefined && links !== '0' && links !== '1') query.details.push({ field: 'links', message: 'must be 0 or 1' });
      query.finish();
      const id = ctx.params.message_id!;
      const checks = await checkCapturedMessage(services, id, { links: links !== '0' });
      if (!checks) throw new ApiError('not_found', `No captured message with id ${id}.`);
      await services.checkSummaries.store(id, checks.summary);
      return { status: 200, body: checks };
    },
    raw: async (ctx) => {
      const message = await loadMessage(services, ctx.params.message_id!);
      // A download (the dashboard saves it as <id>.eml and shows it as text): mail is hostile
      // content, never to be sniffed into HTML or rendered on the relay's origin.
      return { status: 200, raw: { contentType: 'message/rfc822', data: message.raw }, headers: downloadHeaders(`${message.id}.eml`) };
    },
  } satisfies Record<string, Handler>;
}
