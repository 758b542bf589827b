// The dashboard's inbox on top of captured mail: search and cursor paging, read flags, deleting
// one message, attachments, the sandboxed HTML view, and release through the upstream provider.
import { dashboardHeaders, downloadHeaders } from '../dashboard/security-headers.js';
import { ApiError, validationError } from '../errors.js';
import { htmlViewPolicy, inlineContentIds } from '../inbox/html-view.js';
import { parseInboxSearch } from '../inbox/search-query.js';
import { asBody } from '../domain/admin-body.js';
import { QueryParams } from '../domain/query-params.js';
import type { RelayServices } from '../services.js';
import { getCapturedMessage } from '../storage/captured.js';
import { countUnread, countUnreadByProject, deleteCapturedMessage, getInboxEntry, searchInbox, setRead, type InboxCursor } from '../storage/inbox.js';
import { projectParam } from './admin-messages.js';
import type { RequestContext } from './context.js';
import type { Handler } from './router.js';

// The MIME parser and the SMTP client load with the first message opened or released, not with
// the relay: most starts (a developer's, each test's) open none.
const parseMessage = async (raw: Buffer) => (await import('../inbox/read-message.js')).parseMessage(raw);

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 200;
const MAX_QUERY_CHARS = 500;
const BODY_LIMIT = 4 * 1024;

// A page ends at an entry: its seq, and its capture time (a search bounded by before:/after: pages by time).
function encodeCursor(at: InboxCursor): string {
  return Buffer.from(`i2:${at.seq}:${at.receivedAt}`).toString('base64url');
}

function decodeCursor(cursor: string): InboxCursor | undefined {
  const m = /^i2:(\d{1,15}):(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z)$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  return m ? { seq: Number(m[1]), receivedAt: m[2]! } : undefined;
}

async function inboxQuery(s: RelayServices, ctx: RequestContext) {
  const query = new QueryParams(ctx.url.searchParams);
  // Every term of q is compared with stored text: a NUL in any of them matches nothing.
  const q = query.filter('q') ?? '';
  const cursorRaw = query.single('cursor');
  const limit = query.integer('limit', { min: 1, max: MAX_LIMIT, fallback: DEFAULT_LIMIT });
  if (q.length > MAX_QUERY_CHARS) query.details.push({ field: 'q', message: `must be at most ${MAX_QUERY_CHARS} characters` });
  const before = cursorRaw === undefined ? undefined : decodeCursor(cursorRaw);
  if (cursorRaw !== undefined && before === undefined) query.details.push({ field: 'cursor', message: 'is not a valid cursor' });
  const project = await projectParam(s, query);
  const { matchesNothing } = query.finish();
  const search = parseInboxSearch(q);
  if (project !== undefined) search.project = project;
  return { search, page: before === undefined ? { limit } : { before, limit }, matchesNothing };
}

async function loadCaptured(s: RelayServices, id: string) {
  const message = await getCapturedMessage(s.db, id);
  if (!message) throw new ApiError('not_found', `No captured message with id ${id}.`);
  return message;
}

async function readBody(ctx: RequestContext): Promise<Record<string, unknown>> {
  return asBody(await ctx.readJson(BODY_LIMIT));
}

export function adminInboxHandlers(s: RelayServices) {
  const id = (ctx: RequestContext) => ctx.params.message_id!;
  return {
    search: async (ctx) => {
      const { search, page, matchesNothing } = await inboxQuery(s, ctx);
      const nothing = { entries: [], next: null };
      const [result, unread] = await Promise.all([matchesNothing ? nothing : searchInbox(s.db, search, page), countUnread(s.db, search.project)]);
      return {
        status: 200,
        body: { messages: await s.checkSummaries.attach(result.entries), next_cursor: result.next === null ? null : encodeCursor(result.next), unread },
      };
    },
    unread: async () => {
      const [unread, projects] = await Promise.all([countUnread(s.db), countUnreadByProject(s.db)]);
      return { status: 200, body: { unread, projects } };
    },
    markRead: async (ctx) => {
      const body = await readBody(ctx);
      const extra = Object.keys(body).filter((k) => k !== 'read');
      if (typeof body.read !== 'boolean' || extra.length > 0) {
        throw validationError([
          ...(typeof body.read !== 'boolean' ? [{ field: 'read', message: 'is required: true or false' }] : []),
          ...extra.map((field) => ({ field, message: 'is not a known field' })),
        ]);
      }
      const read = body.read;
      const found = await s.db.write((tx) => setRead(tx, id(ctx), read, s.clock.iso()));
      const entry = found ? await getInboxEntry(s.db, id(ctx)) : undefined;
      if (!entry) throw new ApiError('not_found', `No captured message with id ${id(ctx)}.`);
      s.bus.emit('inbox.changed');
      return { status: 200, body: entry };
    },
    deleteMessage: async (ctx) => {
      const deleted = await s.db.write((tx) => deleteCapturedMessage(tx, id(ctx)));
      if (!deleted) throw new ApiError('not_found', `No captured message with id ${id(ctx)}.`);
      s.bus.emit('inbox.changed');
      return { status: 204 };
    },
    html: async (ctx) => {
      const message = await loadCaptured(s, id(ctx));
      const parsed = await parseMessage(message.raw);
      const html = typeof parsed.html === 'string' ? inlineContentIds(parsed, parsed.html) : '';
      const allowRemote = ctx.url.searchParams.get('remote') === '1';
      return {
        status: 200,
        raw: { contentType: 'text/html; charset=utf-8', data: html },
        headers: { ...dashboardHeaders(htmlViewPolicy(allowRemote)), 'Cache-Control': 'private, no-store' },
      };
    },
    attachment: async (ctx) => {
      const message = await loadCaptured(s, id(ctx));
      const parsed = await parseMessage(message.raw);
      const index = /^\d{1,4}$/.test(ctx.params.index!) ? Number(ctx.params.index) : -1;
      const attachment = parsed.attachments[index];
      if (!attachment) throw new ApiError('not_found', `Message ${id(ctx)} has no attachment ${ctx.params.index}.`);
      return {
        status: 200,
        raw: { contentType: 'application/octet-stream', data: attachment.content },
        headers: downloadHeaders(attachment.filename ?? `attachment-${index}`),
      };
    },
    release: async (ctx) => {
      const body = await readBody(ctx);
      const to = typeof body.to === 'string' ? body.to.trim() : '';
      const extra = Object.keys(body).filter((k) => k !== 'to');
      if (!/^[^\s@<>]+@[^\s@<>]+$/.test(to) || to.length > 254 || extra.length > 0) {
        throw validationError([
          ...(/^[^\s@<>]+@[^\s@<>]+$/.test(to) && to.length <= 254 ? [] : [{ field: 'to', message: 'is required: one email address' }]),
          ...extra.map((field) => ({ field, message: 'is not a known field' })),
        ]);
      }
      const upstream = s.config.delivery.provider === 'smtp' ? s.config.delivery.smtp : undefined;
      if (!upstream) {
        throw new ApiError('forbidden', 'Release needs an upstream SMTP provider: start the relay with --upstream smtp://host:port.');
      }
      const message = await loadCaptured(s, id(ctx));
      try {
        const response = await (await import('../inbox/release.js')).releaseMessage(upstream, { raw: message.raw, envelopeFrom: message.from }, to);
        s.log.info('inbox', 'message released', { request_id: ctx.requestId, message_id: message.id });
        return { status: 200, body: { id: message.id, to, released_at: s.clock.iso(), response } };
      } catch (error) {
        throw new ApiError('service_unavailable', `The upstream did not take the message: ${(error as Error).message}`, { retryAfter: 30 });
      }
    },
  } satisfies Record<string, Handler>;
}
